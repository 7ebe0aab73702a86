"""The project's moto launcher (internal/testutil/moto/launcher.py, which closes moto's CloudFormation
gaps) plus the gaps these end-to-end apps meet that it does not close yet. Each is a fault of moto,
not of the app or of a deploy tool, and is closed the way real CloudFormation behaves:

- AWS::ApiGateway::Method with a MOCK integration (the CORS preflight of every RestApi with CORS
  options): moto requires IntegrationHttpMethod and Uri, which a MOCK integration has not.
- A stack created or updated through a change set gets its new resources in template order, DependsOn
  ignored (moto's CreateStack honours it): an AWS::ApiGateway::Deployment, which depends on its
  methods only through DependsOn, is created before them and moto refuses it ("The REST API doesn't
  contain any methods"). CloudFormation creates what a resource depends on first.
- Fn::GetAtt of AWS::ElasticLoadBalancingV2::TargetGroup (TargetGroupFullName, TargetGroupName,
  LoadBalancerArns) and of LoadBalancer's LoadBalancerFullName and SecurityGroups, which every
  CloudWatch metric of a load balancer or target group reads: moto answers 500 and leaves the stack
  half-updated. CloudFormation answers "targetgroup/NAME/ID" and "app/NAME/ID" (the ARN's tail).
- An update of a resource whose moto model cannot update from a template (a target group whose
  health check changes, among others) removes the resource from the stack's map, so every later
  Ref or Fn::GetAtt of it fails with "references undefined resource". CloudFormation updates it;
  here the resource stays as it was (its physical id and attributes are right, its new
  properties are not applied: nothing these scripts read).
- DeleteChangeSet of a name the stack has no change set by (the CDK CLI deletes its
  "cdk-deploy-change-set" before every update) fails in the project's launcher with
  "ChangeSet [NAME] does not exist"; CloudFormation succeeds whenever the stack exists. And
  DescribeChangeSet of a missing change set answers ValidationError where CloudFormation answers
  ChangeSetNotFound (404), which the CLI waits for after that delete.
- A change set that keeps an SSM-typed parameter with UsePreviousValue (the CDK CLI does so for
  BootstrapVersion on every update) fails: moto looks the previous, resolved value up in SSM as if
  it were the parameter's name. CloudFormation resolves the parameter's name again.

Usage: python moto-launcher.py -H 127.0.0.1 -p PORT  (as the project's launcher)
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "internal", "testutil", "moto"))
import launcher  # noqa: E402,F401  (importing it applies its patches)
from moto.apigateway import models as apigw  # noqa: E402
from moto.cloudformation import parsing  # noqa: E402
from moto.elbv2 import models as elbv2  # noqa: E402

_method_from_cfn = apigw.Method.create_from_cloudformation_json.__func__


def _method_create(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs):
    integration = cloudformation_json.get("Properties", {}).get("Integration")
    if isinstance(integration, dict):
        integration.setdefault("IntegrationHttpMethod", None)
        integration.setdefault("Uri", None)
    return _method_from_cfn(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs)


apigw.Method.create_from_cloudformation_json = classmethod(_method_create)

def _target_group_attr(self, name):
    if name == "TargetGroupFullName":
        return self.arn.split(":")[-1]
    if name == "TargetGroupName":
        return self.name
    if name == "LoadBalancerArns":
        return list(getattr(self, "load_balancer_arns", []) or [])
    if name == "TargetGroupArn":
        return self.arn
    from moto.cloudformation.exceptions import UnformattedGetAttTemplateException

    raise UnformattedGetAttTemplateException()


elbv2.FakeTargetGroup.has_cfn_attr = classmethod(
    lambda cls, attr: attr in ("TargetGroupFullName", "TargetGroupName", "LoadBalancerArns", "TargetGroupArn"))
elbv2.FakeTargetGroup.get_cfn_attribute = _target_group_attr
_load_balancer_attr = elbv2.FakeLoadBalancer.get_cfn_attribute


def _load_balancer_attr_full(self, name):
    if name == "LoadBalancerFullName":
        return self.arn.split(":loadbalancer/")[-1]
    if name == "SecurityGroups":
        return list(self.security_groups)
    return _load_balancer_attr(self, name)


elbv2.FakeLoadBalancer.get_cfn_attribute = _load_balancer_attr_full

_parse_and_update = parsing.parse_and_update_resource


def _update_or_keep(logical_id, resource_json, resources_map, account_id, region_name):
    updated = _parse_and_update(logical_id, resource_json, resources_map, account_id, region_name)
    if updated is None and logical_id in resources_map._parsed_resources:
        return resources_map._parsed_resources[logical_id]
    return updated


parsing.parse_and_update_resource = _update_or_keep

_delete_change_set = launcher.Response.delete_change_set


def _delete_change_set_if_any(self):
    try:
        return _delete_change_set(self)
    except launcher.ValidationError:
        stack = self._get_param("StackName")
        if not stack or not any(stack in (s.name, s.stack_id) for s in self.cloudformation_backend.stacks.values()):
            raise
        return launcher.EmptyResult()


launcher.Response.delete_change_set = _delete_change_set_if_any


class ChangeSetNotFound(launcher.ValidationError):
    code = "ChangeSetNotFound"
    status_code = 404


_describe_change_set = launcher.Response.describe_change_set


def _describe_change_set_not_found(self):
    try:
        return _describe_change_set(self)
    except launcher.ValidationError as e:
        if "does not exist" not in str(e) or isinstance(e, ChangeSetNotFound):
            raise
        raise ChangeSetNotFound(message=f"ChangeSet [{self._get_param('ChangeSetName')}] does not exist") from e


launcher.Response.describe_change_set = _describe_change_set_not_found

_parse_ssm_parameter = parsing.ResourceMap.parse_ssm_parameter


def _parse_ssm_parameter_or_previous(self, value, value_type):
    from moto.ssm.models import ssm_backends

    if ssm_backends[self._account_id][self._region_name].get_parameter(value) is None:
        previous = (self._template.get("Parameters") or {})
        for name, spec in previous.items():
            if str(spec.get("Type", "")).startswith("AWS::SSM::Parameter::Value") and value == self.input_parameters.get(name):
                return _parse_ssm_parameter(self, spec.get("Default", value), value_type)
    return _parse_ssm_parameter(self, value, value_type)


parsing.ResourceMap.parse_ssm_parameter = _parse_ssm_parameter_or_previous

_getitem = parsing.ResourceMap.__getitem__


def _getitem_after_dependencies(self, key):
    if key not in self._parsed_resources:
        depends = (self._resource_json_map.get(key) or {}).get("DependsOn") or []
        for dependency in [depends] if isinstance(depends, str) else depends:
            if dependency in self._resource_json_map and dependency not in self._parsed_resources:
                self[dependency]
    return _getitem(self, key)


parsing.ResourceMap.__getitem__ = _getitem_after_dependencies

if __name__ == "__main__":
    from moto.server import main

    sys.exit(main(sys.argv[1:]))
