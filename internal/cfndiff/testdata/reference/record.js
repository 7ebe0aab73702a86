// Records the verdict of the real @aws-cdk/cloudformation-diff on every pair under the given
// directories, in the normalized expected.json format described in README.md. Run by record.sh.
'use strict';
const fs = require('fs');
const path = require('path');
const { fullDiff } = require('@aws-cdk/cloudformation-diff');

function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    const out = {};
    for (const k of Object.keys(v).sort()) if (v[k] !== undefined) out[k] = sortKeys(v[k]);
    return out;
  }
  return v;
}
const byJson = (xs) => xs.map(sortKeys).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : JSON.stringify(a) > JSON.stringify(b) ? 1 : 0));
const plain = (x) => JSON.parse(JSON.stringify(x));
const unwrap = (m) => (m.type === 'parsed' ? m.value : { unparseable: m.repr });

function names(changes) {
  const out = { added: [], removed: [], updated: [] };
  for (const [k, d] of Object.entries(changes || {})) {
    (d.isAddition ? out.added : d.isRemoval ? out.removed : out.updated).push(k);
  }
  for (const k of Object.keys(out)) out[k].sort();
  return out;
}

function normalize(diff) {
  const attrs = { added: [], removed: [], updated: [] };
  for (const [key, d] of [['AWSTemplateFormatVersion', diff.awsTemplateFormatVersion], ['Description', diff.description], ['Transform', diff.transform]]) {
    if (d) (d.isAddition ? attrs.added : d.isRemoval ? attrs.removed : attrs.updated).push(key);
  }
  const resources = {};
  for (const [id, r] of Object.entries(diff.resources.changes)) {
    const props = {};
    for (const [k, p] of Object.entries(r.propertyUpdates)) props[k] = p.changeImpact;
    resources[id] = {
      changeImpact: r.changeImpact, oldType: r.oldResourceType ?? null, newType: r.newResourceType ?? null,
      isAddition: r.isAddition, isRemoval: r.isRemoval, propertyChanges: props, otherChanges: Object.keys(r.otherChanges).sort(),
    };
  }
  const iam = diff.iamChanges;
  const sg = diff.securityGroupChanges;
  const rules = (dir, rs) => rs.map((r) => ({ direction: dir, ...plain(r.toJson()) }));
  return sortKeys({
    differenceCount: diff.differenceCount, isEmpty: diff.isEmpty, attributes: attrs,
    resources,
    parameters: names(diff.parameters.changes), outputs: names(diff.outputs.changes), conditions: names(diff.conditions.changes),
    mappings: names(diff.mappings.changes), metadata: names(diff.metadata.changes), unknown: names(diff.unknown.changes),
    security: {
      iamStatementsAdded: byJson(iam.statements.additions.map((s) => unwrap(s._toJson()))),
      iamStatementsRemoved: byJson(iam.statements.removals.map((s) => unwrap(s._toJson()))),
      managedPoliciesAdded: byJson(iam.managedPolicies.additions.map((s) => unwrap(s._toJson()))),
      managedPoliciesRemoved: byJson(iam.managedPolicies.removals.map((s) => unwrap(s._toJson()))),
      securityGroupRulesAdded: byJson([...rules('ingress', sg.ingress.additions), ...rules('egress', sg.egress.additions)]),
      securityGroupRulesRemoved: byJson([...rules('ingress', sg.ingress.removals), ...rules('egress', sg.egress.removals)]),
      ssoPermissionSetsAdded: byJson(iam.ssoPermissionSets.additions.map(plain)), ssoPermissionSetsRemoved: byJson(iam.ssoPermissionSets.removals.map(plain)),
      ssoAssignmentsAdded: byJson(iam.ssoAssignments.additions.map(plain)), ssoAssignmentsRemoved: byJson(iam.ssoAssignments.removals.map(plain)),
      ssoInstanceACAConfigsAdded: byJson(iam.ssoInstanceACAConfigs.additions.map(plain)), ssoInstanceACAConfigsRemoved: byJson(iam.ssoInstanceACAConfigs.removals.map(plain)),
      permissionsBroadened: diff.permissionsBroadened, permissionsAnyChanges: diff.permissionsAnyChanges,
    },
  });
}

for (const root of process.argv.slice(2)) {
  for (const name of fs.readdirSync(root).sort()) {
    const dir = path.join(root, name);
    if (!fs.existsSync(path.join(dir, 'old.json'))) continue;
    const read = (f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
    const diff = fullDiff(read('old.json'), read('new.json'));
    fs.writeFileSync(path.join(dir, 'expected.json'), JSON.stringify(normalize(diff), null, 2) + '\n');
  }
}
