"""cdkbot's launcher of moto_server: moto 5.x with the CloudFormation gaps that matter to a CDK
deployer closed the way real CloudFormation behaves, so tests and benchmarks shape nothing around
the emulator. Usage: python launcher.py [moto_server arguments, e.g. -H 127.0.0.1 -p 5000].

The gaps, and what closes each (README.md beside this file keeps the list; each has a Go test in
internal/testutil/moto):

1. Stacks created or updated through change sets get no Outputs and no Exports (moto parses the
   template only in CreateStack/UpdateStack): after a change set executes, the stack's template,
   outputs and exports are rebuilt from the change set's template and the region's export registry
   is updated (unique names enforced).
2. Fn::ImportValue in a change-set stack does not resolve (such stacks are built without the
   region's exports): every change-set stack resolves imports against the region's exports, and a
   missing export fails the execution ("No export named X found").
3. An export in use can be removed (by an update or by deleting the stack): the update fails and
   rolls back with "Export X cannot be deleted as it is in use by Y"; a stack whose export is in
   use ends DELETE_FAILED.
4. Executed change sets linger: executing a change set deletes the stack's change sets, as
   CloudFormation does (the executed one stays describable by ARN).
5. Bare change-set names resolve across stacks, and ListChangeSets ignores StackName: a change set
   named without its ARN is looked up in the named stack only, and listing is per stack.
6. A change set's Modify changes carry no Replacement, Scope or Details (moto lists only Action,
   LogicalResourceId and ResourceType): each gets them as CloudFormation's DescribeChangeSet gives
   them (ResourceChange in the SDK's model) - per changed property a Detail with Target
   {Attribute: Properties, Name, RequiresRecreation: Always | Conditionally | Never}, Evaluation
   Static, ChangeSource DirectModification; Scope [Properties]; Replacement True when a property
   always recreates, Conditional when one may, else False. Whether a property recreates comes from
   the resource specification cdkbot vendors (internal/resourcespec/spec.tsv, the same registry
   data CloudFormation publishes); a property it does not know updates in place.
7. Drift detection does not exist (DetectStackDrift, DescribeStackDriftDetectionStatus and
   DescribeStackResourceDrifts are unknown actions): they answer as CloudFormation does (shapes
   from the SDK's models), comparing what the stack set with what the service holds now. Checked:
   AWS::SSM::Parameter (Value, Type, Description; the parameter CloudFormation created against
   SSM's current version, DELETED when it is gone). Every other type is NOT_CHECKED, as AWS
   reports types drift detection does not support. Detection completes at once.
8. UpdateTerminationProtection is an unknown action (moto keeps the flag CreateStack was given
   and never changes it): it sets the stack's flag, which DescribeStacks then reports, and answers
   with the StackId as CloudFormation does.
9. AWS::ApiGateway::Method with a MOCK integration (the CORS preflight of every CDK RestApi with
   CORS options) fails the stack with KeyError IntegrationHttpMethod: moto reads IntegrationHttpMethod
   and Uri as required, which API Gateway requires only of the types that call a backend (HTTP,
   HTTP_PROXY, AWS, AWS_PROXY; moto's PutIntegration still checks those). Both are optional here.
10. Resources a change set adds are created in template order, DependsOn ignored (moto's
   CreateStack honours it): an AWS::ApiGateway::Deployment, which depends on its methods only
   through DependsOn, comes before them and fails "The REST API doesn't contain any methods".
   Creating a resource creates what it DependsOn first, as CloudFormation does.
11. Fn::GetAtt of an AWS::ElasticLoadBalancingV2::TargetGroup (TargetGroupFullName,
   TargetGroupName, TargetGroupArn, LoadBalancerArns) or of a LoadBalancer's LoadBalancerFullName
   or SecurityGroups (what every CloudWatch metric of either reads) answers 500: they resolve as
   CloudFormation documents them, the full names being the ARN's tail ("targetgroup/NAME/ID",
   "app/NAME/ID").
12. Updating a resource whose moto model cannot update from a template (a target group whose
   health check changes, among others) drops it from the stack: every later Ref or Fn::GetAtt of
   it fails "references undefined resource", and DescribeStackResources no longer lists it. The
   resource stays, with its physical id and attributes, as after an in-place update; its new
   properties are not applied to moto's model (README.md lists that among the remaining gaps).
13. DeleteChangeSet of a name the stack has no change set by fails "ChangeSet [NAME] does not
   exist", where CloudFormation succeeds whenever the stack exists (the CDK CLI deletes its
   cdk-deploy-change-set so before every update); and a missing change set is a ValidationError
   where CloudFormation answers ChangeSetNotFound (HTTP 404), which the CLI waits for after that
   delete. Both as CloudFormation.
14. UsePreviousValue of an SSM-typed parameter (the CDK CLI keeps BootstrapVersion so on every
   update) takes the value moto resolved from SSM and looks it up in SSM as a parameter name,
   failing the change set. CloudFormation keeps the parameter's previous value - the SSM name -
   and resolves it again, so the update reads the parameter's current value.
"""

import os
import sys

from moto.apigateway import models as apigateway
from moto.cloudformation import models, parsing, responses
from moto.cloudformation.exceptions import ValidationError
from moto.core.responses import ActionResult, EmptyResult
from moto.elbv2 import models as elbv2

Backend = models.CloudFormationBackend
Response = responses.CloudFormationResponse


def _imports(value):
    """The export names a template imports (Fn::ImportValue of a literal name)."""
    found = set()
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "Fn::ImportValue" and isinstance(v, str):
                found.add(v)
            else:
                found |= _imports(v)
    elif isinstance(value, list):
        for v in value:
            found |= _imports(v)
    return found


def _export_names(template):
    names = set()
    for out in (template.get("Outputs") or {}).values():
        name = (out or {}).get("Export", {}).get("Name")
        if isinstance(name, str):
            names.add(name)
    return names


def _importers(backend, name, but):
    """Names of the live stacks, other than stack id `but`, whose template imports export `name`."""
    users = []
    for stack in backend.stacks.values():
        if stack.stack_id == but or stack.status == "REVIEW_IN_PROGRESS":
            continue
        if name in _imports(getattr(stack, "template_dict", None) or {}):
            users.append(stack.name)
    return users


def _find_change_set(backend, name, stack_name):
    """Gap 5: an ARN names one change set; a bare name only within the named stack."""
    if name in backend.change_sets:
        return backend.change_sets[name]
    if name in _executed(backend):
        return _executed(backend)[name]
    for cs in backend.change_sets.values():
        if cs.change_set_name == name and stack_name in (cs.stack_name, cs.stack_id):
            return cs
    if PATCH_GAP_13:
        raise ChangeSetNotFound(name)
    raise ValidationError(name, message=f"ChangeSet [{name}] does not exist")


class ChangeSetNotFound(ValidationError):
    """Gap 13: CloudFormation's ChangeSetNotFoundException (query error code ChangeSetNotFound, 404)."""

    code = "ChangeSetNotFound"
    status_code = 404

    def __init__(self, name):
        super().__init__(name, message=f"ChangeSet [{name}] does not exist")


def _executed(backend):
    if not hasattr(backend, "cdkbot_executed"):
        backend.cdkbot_executed = {}
    return backend.cdkbot_executed


_original_create_change_set = Backend.create_change_set


def create_change_set(self, *args, **kwargs):
    change_set_id, stack_id = _original_create_change_set(self, *args, **kwargs)
    stack = self.stacks[stack_id]
    # Gap 2: the stack's resources resolve Fn::ImportValue against the region's exports.
    stack.cross_stack_resources = self.exports
    stack.resource_map.cross_stack_resources = self.exports
    return change_set_id, stack_id


def _fail_update(stack, change_set, reason):
    """An update CloudFormation starts and rolls back: the old template stays."""
    creating = change_set.change_set_type == "CREATE"
    verb = "CREATE" if creating else "UPDATE"
    stack._add_stack_event(f"{verb}_IN_PROGRESS", resource_status_reason="User Initiated")
    stack._add_stack_event(f"{verb}_FAILED", resource_status_reason=reason)
    if creating:
        stack._add_stack_event("ROLLBACK_IN_PROGRESS", resource_status_reason=reason)
        stack._add_stack_event("ROLLBACK_COMPLETE")
        stack.status = "ROLLBACK_COMPLETE"
    else:
        stack._add_stack_event("UPDATE_ROLLBACK_IN_PROGRESS", resource_status_reason=reason)
        stack._add_stack_event("UPDATE_ROLLBACK_COMPLETE")
        stack.status = "UPDATE_ROLLBACK_COMPLETE"
    change_set.execution_status = "EXECUTE_FAILED"


def execute_change_set(self, change_set_name, stack_name=None):
    change_set = _find_change_set(self, change_set_name, stack_name)
    if change_set.execution_status != "AVAILABLE":
        raise ValidationError(change_set_name, message=f"ChangeSet [{change_set.change_set_id}] cannot be executed in its current status of [{change_set.status}]")
    stack = self.stacks[change_set.stack_id]
    new = change_set.template_dict or {}
    # Gap 3: an export another stack imports cannot disappear.
    old_exports = {e.name for e in self.exports.values() if e.exporting_stack_id == stack.stack_id}
    for name in sorted(old_exports - _export_names(new)):
        users = _importers(self, name, stack.stack_id)
        if users:
            _fail_update(stack, change_set, f"Export {name} cannot be deleted as it is in use by {', '.join(users)}")
            _delete_change_sets(self, stack, change_set)
            return
    # Gap 2: every import must name an existing export of another stack.
    for name in sorted(_imports(new)):
        export = self.exports.get(name)
        if export is None or export.exporting_stack_id == stack.stack_id:
            _fail_update(stack, change_set, f"No export named {name} found. Rollback requested by user.")
            _delete_change_sets(self, stack, change_set)
            return
    # Gap 1: apply, then rebuild the template, outputs and exports from the change set.
    kind = change_set.change_set_type
    stack._add_stack_event(f"{kind}_IN_PROGRESS", resource_status_reason="User Initiated")
    change_set.apply()
    stack.template = change_set.template
    stack._parse_template()
    stack.output_map = stack._create_output_map()
    for name in list(self.exports):
        if self.exports[name].exporting_stack_id == stack.stack_id:
            del self.exports[name]
    try:
        self._validate_export_uniqueness(stack)
    except ValidationError:
        _fail_update(stack, change_set, "Export names must be unique across a given region")
        return
    for export in stack.exports:
        self.exports[export.name] = export
    stack._add_stack_event(f"{kind}_COMPLETE")
    stack.status = f"{kind}_COMPLETE"
    change_set.execution_status = "EXECUTE_COMPLETE"
    _delete_change_sets(self, stack, change_set)


def _delete_change_sets(backend, stack, executed):
    """Gap 4: executing a change set deletes the stack's change sets."""
    for cs_id, cs in list(backend.change_sets.items()):
        if cs.stack_id == stack.stack_id:
            del backend.change_sets[cs_id]
    _executed(backend)[executed.change_set_id] = executed


_original_delete_stack = Backend.delete_stack


def delete_stack(self, name_or_stack_id):
    for stack in list(self.stacks.values()):
        if name_or_stack_id not in (stack.name, stack.stack_id):
            continue
        for export in list(self.exports.values()):
            if export.exporting_stack_id != stack.stack_id:
                continue
            users = _importers(self, export.name, stack.stack_id)
            if users:
                reason = f"Export {export.name} cannot be deleted as it is in use by {', '.join(users)}"
                stack._add_stack_event("DELETE_IN_PROGRESS", resource_status_reason="User Initiated")
                stack._add_stack_event("DELETE_FAILED", resource_status_reason=reason)
                stack.status = "DELETE_FAILED"
                return
        for cs_id, cs in list(self.change_sets.items()):
            if cs.stack_id == stack.stack_id:
                del self.change_sets[cs_id]
    _original_delete_stack(self, name_or_stack_id)


def delete_change_set(self):
    backend = self.cloudformation_backend
    stack_name = self._get_param("StackName")
    try:
        change_set = _find_change_set(backend, self._get_param("ChangeSetName"), stack_name)
    except ChangeSetNotFound:
        # Gap 13: deleting a change set the stack does not have succeeds while the stack exists.
        if PATCH_GAP_13 and stack_name:
            backend.get_stack(stack_name)
            return EmptyResult()
        raise
    backend.change_sets.pop(change_set.change_set_id, None)
    return EmptyResult()


def describe_change_set(self):
    return ActionResult(_find_change_set(self.cloudformation_backend, self._get_param("ChangeSetName"), self._get_param("StackName")))


def execute_change_set_response(self):
    self.cloudformation_backend.execute_change_set(change_set_name=self._get_param("ChangeSetName"), stack_name=self._get_param("StackName"))
    return EmptyResult()


def list_change_sets(self):
    stack_name = self._get_param("StackName")
    summaries = [cs for cs in self.cloudformation_backend.change_sets.values() if stack_name in (cs.stack_name, cs.stack_id)]
    return ActionResult({"Summaries": summaries})


def _load_spec():
    """Resource type -> property -> 'r' (replace), 'c' (conditional) or 'u' (update)."""
    spec = {}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "resourcespec", "spec.tsv")
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                continue
            cols = line.rstrip("\n").split("\t")
            if len(cols) < 4:
                continue
            props = {}
            for item in cols[3].split(","):
                name, _, rule = item.partition("=")
                if name:
                    props[name] = rule
            spec[cols[0]] = props
    return spec


_SPEC = None
_RECREATION = {"r": "Always", "c": "Conditionally"}
_original_diff = models.ChangeSet.diff


def diff(self):
    """Gap 6: Modify changes with Replacement, Scope and Details, as CloudFormation reports them."""
    global _SPEC
    changes = _original_diff(self)
    if _SPEC is None:
        _SPEC = _load_spec()
    old = (getattr(self.stack, "template_dict", None) or {}).get("Resources") or {}
    new = (self.template_dict or {}).get("Resources") or {}
    for change in changes:
        if change.action != "Modify":
            continue
        before = (old.get(change.logical_resource_id) or {}).get("Properties") or {}
        after = (new.get(change.logical_resource_id) or {}).get("Properties") or {}
        rules = _SPEC.get(change.resource_type, {})
        details = []
        for prop in sorted(set(before) | set(after)):
            if before.get(prop) == after.get(prop):
                continue
            details.append({"Target": {"Attribute": "Properties", "Name": prop,
                                       "RequiresRecreation": _RECREATION.get(rules.get(prop), "Never")},
                            "Evaluation": "Static", "ChangeSource": "DirectModification"})
        recreation = {d["Target"]["RequiresRecreation"] for d in details}
        change.details = details
        change.scope = ["Properties"] if details else []
        change.replacement = "True" if "Always" in recreation else "Conditional" if "Conditionally" in recreation else "False"
    return changes


_DETECTIONS = {}


def _ssm_drift(stack, logical_id, created):
    """Expected (what CloudFormation set) and actual (SSM now) properties of a parameter."""
    from moto.ssm.models import ssm_backends

    expected = {"Name": created.name, "Type": created.parameter_type, "Value": created.value}
    if created.description:
        expected["Description"] = created.description
    current = ssm_backends[stack.account_id][stack.region_name].get_parameter(created.name)
    if current is None:
        return expected, None
    actual = {"Name": current.name, "Type": current.parameter_type, "Value": current.value}
    if current.description:
        actual["Description"] = current.description
    return expected, actual


def _detect(stack):
    import datetime
    import json as _json

    now = datetime.datetime.now(datetime.timezone.utc)
    drifts = []
    for logical_id, res in (stack.template_dict.get("Resources") or {}).items():
        created = stack.resource_map[logical_id]
        entry = {"StackId": stack.stack_id, "LogicalResourceId": logical_id, "ResourceType": res.get("Type"),
                 "PhysicalResourceId": getattr(created, "physical_resource_id", None) or logical_id, "Timestamp": now,
                 "StackResourceDriftStatus": "NOT_CHECKED", "PropertyDifferences": []}
        if res.get("Type") == "AWS::SSM::Parameter" and created is not None:
            expected, actual = _ssm_drift(stack, logical_id, created)
            entry["ExpectedProperties"] = _json.dumps(expected, sort_keys=True)
            if actual is None:
                entry["StackResourceDriftStatus"] = "DELETED"
            else:
                entry["ActualProperties"] = _json.dumps(actual, sort_keys=True)
                diffs = [{"PropertyPath": "/" + k, "ExpectedValue": str(expected.get(k, "")), "ActualValue": str(actual.get(k, "")),
                          "DifferenceType": "NOT_EQUAL" if k in expected and k in actual else ("ADD" if k in actual else "REMOVE")}
                         for k in sorted(set(expected) | set(actual)) if expected.get(k) != actual.get(k)]
                entry["PropertyDifferences"] = diffs
                entry["StackResourceDriftStatus"] = "MODIFIED" if diffs else "IN_SYNC"
        drifts.append(entry)
    return now, drifts


def detect_stack_drift(self):
    """Gap 7: DetectStackDrift (completes at once)."""
    import uuid

    stack = self.cloudformation_backend.get_stack(self._get_param("StackName"))
    detection_id = str(uuid.uuid4())
    _DETECTIONS[detection_id] = (stack.stack_id, *_detect(stack))
    return ActionResult({"StackDriftDetectionId": detection_id})


def describe_stack_drift_detection_status(self):
    detection_id = self._get_param("StackDriftDetectionId")
    if detection_id not in _DETECTIONS:
        raise ValidationError(detection_id, message=f"Drift detection {detection_id} does not exist")
    stack_id, when, drifts = _DETECTIONS[detection_id]
    drifted = sum(1 for d in drifts if d["StackResourceDriftStatus"] in ("MODIFIED", "DELETED"))
    return ActionResult({"StackId": stack_id, "StackDriftDetectionId": detection_id,
                         "StackDriftStatus": "DRIFTED" if drifted else "IN_SYNC", "DetectionStatus": "DETECTION_COMPLETE",
                         "DriftedStackResourceCount": drifted, "Timestamp": when})


def describe_stack_resource_drifts(self):
    stack = self.cloudformation_backend.get_stack(self._get_param("StackName"))
    wanted = self._get_param("StackResourceDriftStatusFilters") or []
    found = [(when, drifts) for sid, when, drifts in _DETECTIONS.values() if sid == stack.stack_id]
    if not found:
        raise ValidationError(stack.name, message="No drift detection has been run on the stack")
    _, drifts = max(found, key=lambda f: f[0])
    return ActionResult({"StackResourceDrifts": [d for d in drifts if not wanted or d["StackResourceDriftStatus"] in wanted]})


def update_termination_protection(self):
    """Gap 8: UpdateTerminationProtection."""
    stack = self.cloudformation_backend.get_stack(self._get_param("StackName"))
    stack.enable_termination_protection = self._get_param("EnableTerminationProtection") in (True, "true", "True")
    return ActionResult({"StackId": stack.stack_id})


_original_method_from_cloudformation = apigateway.Method.create_from_cloudformation_json.__func__


def method_from_cloudformation(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs):
    """Gap 9: IntegrationHttpMethod and Uri are optional (a MOCK integration has neither)."""
    properties = cloudformation_json.get("Properties") or {}
    if isinstance(properties.get("Integration"), dict):
        integration = dict({"IntegrationHttpMethod": None, "Uri": None}, **properties["Integration"])
        cloudformation_json = dict(cloudformation_json, Properties=dict(properties, Integration=integration))
    return _original_method_from_cloudformation(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs)


_original_getitem = parsing.ResourceMap.__getitem__


def resource_after_dependencies(self, key):
    """Gap 10: creating a resource creates what it DependsOn first."""
    if key not in self._parsed_resources:
        depends = (self._resource_json_map.get(key) or {}).get("DependsOn") or []
        for dependency in [depends] if isinstance(depends, str) else depends:
            if dependency in self._resource_json_map and dependency not in self._parsed_resources:
                self[dependency]
    return _original_getitem(self, key)


_TARGET_GROUP_ATTRS = {
    "TargetGroupArn": lambda tg: tg.arn,
    "TargetGroupFullName": lambda tg: tg.arn.split(":")[-1],  # targetgroup/NAME/ID
    "TargetGroupName": lambda tg: tg.name,
    "LoadBalancerArns": lambda tg: list(tg.load_balancer_arns),
}
_LOAD_BALANCER_ATTRS = {
    "LoadBalancerArn": lambda lb: lb.arn,
    "LoadBalancerFullName": lambda lb: lb.arn.split(":loadbalancer/")[-1],  # app/NAME/ID
    "SecurityGroups": lambda lb: list(lb.security_groups or []),
}
_original_load_balancer_attribute = elbv2.FakeLoadBalancer.get_cfn_attribute
_original_load_balancer_has_attribute = elbv2.FakeLoadBalancer.has_cfn_attr


def target_group_attribute(self, name):
    """Gap 11: the target group's attributes CloudFormation documents."""
    if name in _TARGET_GROUP_ATTRS:
        return _TARGET_GROUP_ATTRS[name](self)
    from moto.cloudformation.exceptions import UnformattedGetAttTemplateException

    raise UnformattedGetAttTemplateException()


def load_balancer_attribute(self, name):
    """Gap 11: LoadBalancerArn, LoadBalancerFullName and SecurityGroups (moto answers DNSName and
    LoadBalancerName)."""
    if name in _LOAD_BALANCER_ATTRS:
        return _LOAD_BALANCER_ATTRS[name](self)
    return _original_load_balancer_attribute(self, name)


_original_parse_and_update = parsing.parse_and_update_resource


def update_or_keep(logical_id, resource_json, resources_map, account_id, region_name):
    """Gap 12: a resource moto cannot update stays in the stack as it was."""
    updated = _original_parse_and_update(logical_id, resource_json, resources_map, account_id, region_name)
    if updated is None and resources_map._parsed_resources.get(logical_id) is not None:
        return resources_map._parsed_resources[logical_id]
    return updated


def stack_parameters(self):
    """Gap 14: an SSM-typed parameter's previous value is its SSM name, not what it resolved to."""
    values = dict(self.resource_map.resolved_parameters)
    for name, spec in ((self.template_dict or {}).get("Parameters") or {}).items():
        if name in values and str((spec or {}).get("Type", "")).startswith("AWS::SSM::Parameter::"):
            values[name] = self.resource_map.input_parameters.get(name, spec.get("Default"))
    return values


def _patched(gap):
    """Whether gap's patch applies (see below)."""
    plain = os.environ.get("CDKBOT_MOTO_PLAIN", "")
    return plain != "1" and plain != str(gap)


PATCH_GAP_13 = _patched(13)

# CDKBOT_MOTO_PLAIN=1 starts moto as it is, to see each gap's test fail without the launcher.
# Gaps 9 and on build on the change-set gaps, so CDKBOT_MOTO_PLAIN=N (N >= 9) leaves only gap N
# open, to see its test fail with every other gap closed.
if os.environ.get("CDKBOT_MOTO_PLAIN") != "1":
    Backend.create_change_set = create_change_set
    Backend.execute_change_set = execute_change_set
    Backend.delete_stack = delete_stack
    Response.delete_change_set = delete_change_set
    Response.describe_change_set = describe_change_set
    Response.execute_change_set = execute_change_set_response
    Response.list_change_sets = list_change_sets
    models.ChangeSet.diff = diff
    Response.detect_stack_drift = detect_stack_drift
    Response.describe_stack_drift_detection_status = describe_stack_drift_detection_status
    Response.describe_stack_resource_drifts = describe_stack_resource_drifts
    Response.update_termination_protection = update_termination_protection
if _patched(9):
    apigateway.Method.create_from_cloudformation_json = classmethod(method_from_cloudformation)
if _patched(10):
    parsing.ResourceMap.__getitem__ = resource_after_dependencies
if _patched(11):
    elbv2.FakeTargetGroup.has_cfn_attr = classmethod(lambda cls, attr: attr in _TARGET_GROUP_ATTRS)
    elbv2.FakeTargetGroup.get_cfn_attribute = target_group_attribute
    elbv2.FakeLoadBalancer.has_cfn_attr = classmethod(
        lambda cls, attr: attr in _LOAD_BALANCER_ATTRS or _original_load_balancer_has_attribute(attr))
    elbv2.FakeLoadBalancer.get_cfn_attribute = load_balancer_attribute
if _patched(12):
    parsing.parse_and_update_resource = update_or_keep
if _patched(14):
    models.Stack.stack_parameters = property(stack_parameters)

if __name__ == "__main__":
    from moto.server import main

    sys.exit(main(sys.argv[1:]))
