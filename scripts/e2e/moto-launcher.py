"""The project's moto launcher (internal/testutil/moto/launcher.py, which closes moto's CloudFormation
gaps) plus the gaps these end-to-end apps meet that it does not close yet. Each is a fault of moto,
not of the app or of a deploy tool, and is closed the way real CloudFormation behaves:

- AWS::ApiGateway::Method with a MOCK integration (the CORS preflight of every RestApi with CORS
  options): moto requires IntegrationHttpMethod and Uri, which a MOCK integration has not.
- A stack created or updated through a change set gets its new resources in template order, DependsOn
  ignored (moto's CreateStack honours it): an AWS::ApiGateway::Deployment, which depends on its
  methods only through DependsOn, is created before them and moto refuses it ("The REST API doesn't
  contain any methods"). CloudFormation creates what a resource depends on first.

Usage: python moto-launcher.py -H 127.0.0.1 -p PORT  (as the project's launcher)
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "internal", "testutil", "moto"))
import launcher  # noqa: E402,F401  (importing it applies its patches)
from moto.apigateway import models as apigw  # noqa: E402
from moto.cloudformation import parsing  # noqa: E402

_method_from_cfn = apigw.Method.create_from_cloudformation_json.__func__


def _method_create(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs):
    integration = cloudformation_json.get("Properties", {}).get("Integration")
    if isinstance(integration, dict):
        integration.setdefault("IntegrationHttpMethod", None)
        integration.setdefault("Uri", None)
    return _method_from_cfn(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs)


apigw.Method.create_from_cloudformation_json = classmethod(_method_create)

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
