"""docket's LocalStack extension.

Loaded by an unmodified LocalStack (host mode, no Docker) through its plugin entry points, declared
in ``pyproject.toml`` and wired in :mod:`docket_localstack.plugins`. Each module emulates one thing
community LocalStack cannot do offline:

* :mod:`.lambda_executor` -- zip-packaged custom-runtime Lambdas run as local processes, with
  :mod:`.lambda_runtime_api` (the Runtime API server), :mod:`.lambda_process` (spawning, limits)
  and :mod:`.lambda_output` (output capture, log framing).
* :mod:`.dynamodb` -- DynamoDB served from the bundled moto backend (no DynamoDB Local download).
* :mod:`.textract` -- Textract text detection on Tesseract and poppler (documents and Blocks in
  :mod:`.textract_ocr`).
* :mod:`.chaos` -- fault injection with the request shape of LocalStack's Chaos API.
* :mod:`.cfn_stepfunctions` -- CloudFormation StateMachineVersion / StateMachineAlias resources.
* :mod:`.function_url_iam` -- ``AuthType: AWS_IAM`` for function URLs (SigV4 required, caller
  identity in ``requestContext.authorizer.iam``).
* :mod:`.sfn_callbacks` -- a task token's callback that arrives while its Task is still being
  invoked is kept (with a heartbeat, LocalStack lost it), as on AWS.
"""
