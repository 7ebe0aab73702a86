// One fresh node process diffing one template pair with the reference, as `cdk diff` would for
// one stack. Usage: node one.js OLD NEW
'use strict';
const fs = require('fs');
const { fullDiff } = require('@aws-cdk/cloudformation-diff');
const read = (f) => JSON.parse(fs.readFileSync(f, 'utf8'));
const d = fullDiff(read(process.argv[2]), read(process.argv[3]));
console.log(JSON.stringify({ differences: d.differenceCount }));
