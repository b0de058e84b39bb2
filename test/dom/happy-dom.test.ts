// @vitest-environment happy-dom
import { it } from 'vitest';
import { roundTrip } from './dom-round-trip.js';

it("signs, verifies and handles a delivery under Vitest's happy-dom environment", roundTrip);
