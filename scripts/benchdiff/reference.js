// In-process timing of the reference fullDiff on the pairs benchdiff wrote (median of 21 runs
// after a warm-up that loads the specification). Usage: node reference.js DIR
'use strict';
const fs = require('fs');
const path = require('path');
const { fullDiff } = require('@aws-cdk/cloudformation-diff');
const dir = process.argv[2];
const out = {};
for (const name of ['small', 'pair500', 'pair10000']) {
  const read = (side) => JSON.parse(fs.readFileSync(path.join(dir, `${name}-${side}.json`), 'utf8'));
  const runs = name === 'pair10000' ? 3 : 21;
  fullDiff(read('old'), read('new'));
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const [o, n] = [read('old'), read('new')]; // fullDiff mutates copies, fresh inputs each run
    const t = process.hrtime.bigint();
    fullDiff(o, n);
    samples.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  samples.sort((a, b) => a - b);
  out[`${name}_ms`] = samples[Math.floor(samples.length / 2)];
}
console.log(JSON.stringify(out));
