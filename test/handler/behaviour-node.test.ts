// The shared behaviour suite (behaviour.ts) against payhook/node.
import { behaviourSuite } from './behaviour.js';

behaviourSuite('node');
