// The reference verdicts of one change, beside cdkbot's: @aws-cdk/cloudformation-diff's fullDiff
// (what `cdk diff` prints) on each stack of two cloud assemblies, compared with the per-resource
// impacts and the per-stack broadening of cdkbot's review JSON. Prints one JSON object:
//   { resources: {agree, total, disagreements: [..]}, broadening: {agree, total, disagreements},
//     propagated: [..] }
// A resource whose template entry is the same on both sides but that cdkbot lists is not a
// disagreement: cdkbot follows replacements through references and exports, which the reference
// (one template at a time, values as written) cannot see; such resources are listed as propagated.
// Resources whose only difference is Metadata, and AWS::CDK::Metadata, count on neither side.
// Usage: node reference.js BASE_CDK_OUT HEAD_CDK_OUT REVIEW_JSON
'use strict';
const fs = require('fs');
const path = require('path');
const { fullDiff } = require('@aws-cdk/cloudformation-diff');

const [baseDir, headDir, reviewFile] = process.argv.slice(2);

function stacks(dir) {
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  const out = {};
  for (const [id, a] of Object.entries(manifest.artifacts || {})) {
    if (a.type !== 'aws:cloudformation:stack') continue;
    out[id] = JSON.parse(fs.readFileSync(path.join(dir, a.properties.templateFile), 'utf8'));
  }
  return out;
}

const verdict = {
  WILL_CREATE: 'create', WILL_UPDATE: 'update', WILL_REPLACE: 'replace', MAY_REPLACE: 'may-replace',
  WILL_DESTROY: 'destroy', WILL_ORPHAN: 'orphan', WILL_IMPORT: 'import', NO_CHANGE: 'no-change',
};
const withoutMetadata = (r) => {
  if (!r) return r;
  const { Metadata, ...rest } = r;
  return JSON.stringify(rest);
};

const base = stacks(baseDir);
const head = stacks(headDir);
const review = JSON.parse(fs.readFileSync(reviewFile, 'utf8'));
const ours = {};
for (const s of (review.diff && review.diff.stacks) || []) ours[s.id] = s;

const result = {
  resources: { agree: 0, total: 0, disagreements: [] },
  broadening: { agree: 0, total: 0, disagreements: [] },
  propagated: [],
};
for (const id of [...new Set([...Object.keys(base), ...Object.keys(head)])].sort()) {
  const oldT = base[id] || {};
  const newT = head[id] || {};
  const diff = fullDiff(JSON.parse(JSON.stringify(oldT)), JSON.parse(JSON.stringify(newT)));
  const theirs = {};
  diff.resources.forEachDifference((logicalId, change) => {
    const type = change.newResourceType || change.oldResourceType;
    if (type === 'AWS::CDK::Metadata') return;
    const o = (oldT.Resources || {})[logicalId];
    const n = (newT.Resources || {})[logicalId];
    if (o && n && withoutMetadata(o) === withoutMetadata(n)) return;
    theirs[logicalId] = change.isAddition ? 'create'
      : change.isRemoval ? (change.changeImpact === 'WILL_ORPHAN' ? 'orphan' : 'destroy')
        : verdict[change.changeImpact] || change.changeImpact;
  });
  const s = ours[id];
  const mine = {};
  for (const r of (s && s.resources) || []) {
    const type = r.newType || r.oldType;
    if (r.metadataOnly || type === 'AWS::CDK::Metadata' || r.impact === 'no-change') continue;
    mine[r.logicalId] = r.impact;
  }
  for (const logicalId of [...new Set([...Object.keys(theirs), ...Object.keys(mine)])].sort()) {
    const o = (oldT.Resources || {})[logicalId];
    const n = (newT.Resources || {})[logicalId];
    if (!(logicalId in theirs) && o && n && withoutMetadata(o) === withoutMetadata(n)) {
      result.propagated.push(`${id}/${logicalId}: cdkbot ${mine[logicalId]}`);
      continue;
    }
    result.resources.total++;
    if (theirs[logicalId] === mine[logicalId]) result.resources.agree++;
    else result.resources.disagreements.push(`${id}/${logicalId}: cdkbot ${mine[logicalId] || 'nothing'}, reference ${theirs[logicalId] || 'nothing'}`);
  }
  if (Object.keys(theirs).length > 0 || Object.keys(mine).length > 0) {
    const refBroad = diff.permissionsBroadened;
    const ourBroad = !!(s && s.security && s.security.broadening);
    result.broadening.total++;
    if (refBroad === ourBroad) result.broadening.agree++;
    else result.broadening.disagreements.push(`${id}: cdkbot ${ourBroad ? 'broadening' : 'not broadening'}, reference ${refBroad ? 'broadening' : 'not broadening'}`);
  }
}
console.log(JSON.stringify(result));
