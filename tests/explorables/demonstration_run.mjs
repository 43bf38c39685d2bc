// Prints the browser's training run as JSON, for test_demonstration.py to compare with numpy.
// Usage: node tests/explorables/demonstration_run.mjs D_K SEED [STEPS]
import { trainDemo } from "../../static/explorables/demonstration.mjs";

const [dk, seed, steps] = process.argv.slice(2).map(Number);
const history = trainDemo({ dk, seed, ...(steps ? { steps } : {}) });
process.stdout.write(JSON.stringify(history));
