// Package compat holds cdkbot's compatibility rules: which schema and API changes require which
// semantic-version bump, whether a declared bump honours them, and (built on these) the checks
// a PR gets when it changes framework versions, schemas or bootstrap requirements.
//
// It is pure logic: schemas and versions in, findings out.
package compat
