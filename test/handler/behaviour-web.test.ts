// The shared behaviour suite (behaviour.ts) against payhook/web.
import { behaviourSuite } from './behaviour.js';

behaviourSuite('web');
