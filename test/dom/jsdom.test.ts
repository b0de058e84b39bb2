// @vitest-environment jsdom
import { it } from 'vitest';
import { roundTrip } from './dom-round-trip.js';

it("signs, verifies and handles a delivery under Vitest's jsdom environment", roundTrip);
