"""Entry points named in pyproject.toml. Imports stay inside the factories so that LocalStack only
pays for what a run selects (PROVIDER_OVERRIDE_*, LAMBDA_RUNTIME_EXECUTOR)."""

from localstack.runtime import hooks
from localstack.services.cloudformation.resource_provider import (
    CloudFormationResourceProviderPlugin,
)
from localstack.services.lambda_.invocation.plugins import RuntimeExecutorPlugin
from localstack.services.plugins import Service, aws_provider


@aws_provider(api="dynamodb", name="docket")
def dynamodb():
    from docket_localstack.dynamodb import create_service

    return create_service()


@aws_provider(api="textract", name="docket")
def textract():
    from docket_localstack.textract import TextractProvider

    return Service.for_provider(TextractProvider())


class ProcessRuntimeExecutorPlugin(RuntimeExecutorPlugin):
    name = "docket-process"

    def load(self, *args, **kwargs):
        from docket_localstack.lambda_executor import ProcessRuntimeExecutor

        return ProcessRuntimeExecutor


@hooks.on_infra_start()
def register_chaos():
    from docket_localstack.chaos import install

    install()


@hooks.on_infra_start()
def register_textract_quotas():
    from docket_localstack.textract_quota import install

    install()


@hooks.on_infra_start()
def register_textract_scale():
    from docket_localstack.textract_scale import install

    install()


@hooks.on_infra_start()
def register_function_url_iam():
    from docket_localstack.function_url_iam import install

    install()


@hooks.on_infra_start()
def register_cfn_data_protection():
    from docket_localstack.cfn_data_protection import install

    install()


@hooks.on_infra_start()
def register_s3_sequencer():
    from docket_localstack.s3_sequencer import install

    install()


@hooks.on_infra_start()
def register_wire_log():
    from docket_localstack.wire_log import install

    install()


@hooks.on_infra_start()
def register_sfn_redrive():
    from docket_localstack.sfn_redrive import install

    install()


class _StepFunctionsResourcePlugin(CloudFormationResourceProviderPlugin):
    """A provider of `cfn_stepfunctions`, found by its CloudFormation type (the plugin's name)."""

    def __init__(self):
        self.factory = None

    def load(self):
        from docket_localstack.cfn_stepfunctions import PROVIDERS

        self.factory = PROVIDERS[self.name]


class StateMachineVersionProviderPlugin(_StepFunctionsResourcePlugin):
    name = "AWS::StepFunctions::StateMachineVersion"


class StateMachineAliasProviderPlugin(_StepFunctionsResourcePlugin):
    name = "AWS::StepFunctions::StateMachineAlias"


class DashboardProviderPlugin(CloudFormationResourceProviderPlugin):
    """`cfn_cloudwatch_dashboard`'s provider, named by its CloudFormation type."""

    name = "AWS::CloudWatch::Dashboard"

    def __init__(self):
        self.factory = None

    def load(self):
        from docket_localstack.cfn_cloudwatch_dashboard import DashboardProvider

        self.factory = DashboardProvider


@hooks.on_infra_start()
def register_jsonpath_cache():
    from docket_localstack.jsonpath_cache import install

    install()


@hooks.on_infra_start()
def register_sfn_callbacks():
    from docket_localstack.sfn_callbacks import install

    install()


@hooks.on_infra_start()
def register_sfn_lambda_errors():
    from docket_localstack.sfn_lambda_errors import install

    install()


@hooks.on_infra_start()
def register_cfn_lambda_version():
    from docket_localstack.cfn_lambda_version import install

    install()


@hooks.on_infra_start()
def register_cfn_sub_changes():
    from docket_localstack.cfn_sub_changes import install

    install()


@hooks.on_infra_start()
def register_events_retry():
    from docket_localstack.events_retry import install

    install()


@hooks.on_infra_start()
def register_sfn_callback_starts():
    from docket_localstack.sfn_callback_starts import install

    install()


@hooks.on_infra_start()
def register_sfn_map_run():
    from docket_localstack.sfn_map_run import install

    install()


@hooks.on_infra_start()
def register_sfn_map_definition():
    from docket_localstack.sfn_map_definition import install

    install()


@hooks.on_infra_start()
def register_sfn_map_results():
    from docket_localstack.sfn_map_results import install

    install()


@hooks.on_infra_start()
def register_sfn_program_cache():
    from docket_localstack.sfn_program_cache import install

    install()


@hooks.on_infra_start()
def register_gc_pauses():
    from docket_localstack.gc_pauses import install

    install()
