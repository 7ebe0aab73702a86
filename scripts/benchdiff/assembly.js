// One fresh node process diffing two cloud assemblies with the reference, as `cdk diff` does with
// the templates it has: every stack of both manifests (nested Stage assemblies included), matched
// by its path of artifact ids, plus the templates of CDK nested stacks; fullDiff, then
// formatDifferences to a stream that discards. Usage: node assembly.js OLD_DIR NEW_DIR
'use strict';
const fs = require('fs');
const path = require('path');
const { Writable } = require('stream');
const { fullDiff, formatDifferences } = require('@aws-cdk/cloudformation-diff');

// templates returns {qualified id: template file} of the assembly in dir and its nested ones.
function templates(dir, prefix, out) {
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  for (const [id, art] of Object.entries(manifest.artifacts || {})) {
    const props = art.properties || {};
    if (art.type === 'aws:cloudformation:stack') {
      out[prefix + id] = path.join(dir, props.templateFile);
    } else if (art.type === 'cdk:cloud-assembly') {
      templates(path.join(dir, props.directoryName), prefix + id + '/', out);
    }
  }
  return out;
}

const read = (f) => (f && fs.existsSync(f) ? JSON.parse(fs.readFileSync(f, 'utf8')) : {});
const sink = new Writable({ write(_chunk, _enc, cb) { cb(); } });
const [oldDir, newDir] = process.argv.slice(2);
const olds = templates(oldDir, '', {});
const news = templates(newDir, '', {});
let differences = 0;
// diff compares one pair and, through the CDK nested stacks of the new side, their children.
function diff(oldFile, newFile, oldBase, newBase) {
  const o = read(oldFile);
  const n = read(newFile);
  const d = fullDiff(o, n);
  differences += d.differenceCount;
  formatDifferences(sink, d);
  for (const [logical, res] of Object.entries(n.Resources || {})) {
    const asset = res.Type === 'AWS::CloudFormation::Stack' && (res.Metadata || {})['aws:asset:path'];
    if (!asset || !asset.endsWith('.json')) continue;
    const was = ((o.Resources || {})[logical] || {}).Metadata || {};
    const oldChild = was['aws:asset:path'] ? path.join(oldBase, was['aws:asset:path']) : undefined;
    diff(oldChild, path.join(newBase, asset), oldBase, newBase);
  }
}
for (const id of new Set([...Object.keys(olds), ...Object.keys(news)])) {
  const oldFile = olds[id];
  const newFile = news[id];
  diff(oldFile, newFile, oldFile ? path.dirname(oldFile) : oldDir, newFile ? path.dirname(newFile) : newDir);
}
console.log(JSON.stringify({ differences }));
