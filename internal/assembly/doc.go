// Package assembly reads a CDK cloud assembly (a cdk.out directory) written by any framework
// version, from the oldest CDK v1 output to today's, into one model that the rest of cdkbot
// shares: stacks, asset manifests, legacy asset metadata, the construct tree, nested assemblies
// (Stages) and feature-flag reports.
//
// It exists because cdkbot is the toolkit side of the CDK protocol: every later step (diff,
// compatibility, policy, publish, deploy) trusts what this package hands it. So loading is strict
// about what could make those steps unsafe or wrong (schema violations, files that escape the
// assembly, dependency cycles, a schema newer than cdkbot understands) and lenient about what is
// merely unfamiliar (unknown artifact types become warnings).
//
// The package does no I/O of its own: it reads through an fs.FS, and templates and the construct
// tree are parsed only when asked for, so a 200-stack assembly loads without parsing templates.
package assembly
