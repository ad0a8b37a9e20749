//! How faults reach the SDK: the interceptor decides per attempt and loses answers
//! ([`FaultInterceptor`]), the wrapped HTTP client answers a request that fails before sending
//! ([`FaultHttpClient`]), and [`InstallFaults`] puts both on a client's config builder.

use std::borrow::Cow;
use std::fmt;

use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::behavior_version::BehaviorVersion;
use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpClient,
    SharedHttpConnector,
};
use aws_smithy_runtime_api::client::interceptors::context::{
    AfterDeserializationInterceptorContextRef, BeforeTransmitInterceptorContextMut,
    BeforeTransmitInterceptorContextRef, FinalizerInterceptorContextMut,
};
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::orchestrator::{
    HttpRequest, HttpResponse, Metadata, OrchestratorError,
};
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_runtime_api::client::runtime_components::{
    RuntimeComponents, RuntimeComponentsBuilder,
};
use aws_smithy_runtime_api::client::runtime_plugin::RuntimePlugin;
use aws_smithy_types::body::SdkBody;
use aws_smithy_types::config_bag::{ConfigBag, Storable, StoreReplace};

use super::rules::normalize_service;
use super::{Action, Faults, Surface};

impl Faults {
    /// The SDK interceptor for these faults.
    pub fn interceptor(&self) -> FaultInterceptor {
        FaultInterceptor {
            faults: self.clone(),
        }
    }

    /// `inner` wrapped so that requests armed with [`Action::FailBeforeSend`] are answered
    /// locally.
    pub fn http_client(&self, inner: SharedHttpClient) -> FaultHttpClient {
        FaultHttpClient {
            inner,
            faults: self.clone(),
        }
    }
}

/// The error a lost response surfaces with (inside `SdkError::ResponseError`, `TimeoutError` or
/// `DispatchFailure`).
#[derive(Debug)]
pub struct LostResponse {
    /// Service.
    pub service: String,
    /// Operation.
    pub operation: String,
}

impl fmt::Display for LostResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "injected fault: the response to {} {} was lost after the request was sent",
            self.service, self.operation
        )
    }
}

impl std::error::Error for LostResponse {}

/// The decision for the current attempt, kept in the config bag (and, for fail_before_send, on
/// the request, where the HTTP client finds it).
#[derive(Debug, Clone)]
pub(super) struct Armed {
    pub(super) rule: usize,
    pub(super) service: String,
    pub(super) operation: String,
    pub(super) action: Action,
}

#[derive(Debug, Clone)]
struct Attempt(Option<Armed>);

impl Storable for Attempt {
    type Storer = StoreReplace<Self>;
}

/// The interceptor: decides per attempt, just before transmit; applies lost responses.
#[derive(Debug, Clone)]
pub struct FaultInterceptor {
    faults: Faults,
}

impl FaultInterceptor {
    fn armed(cfg: &ConfigBag) -> Option<Armed> {
        cfg.load::<Attempt>().and_then(|a| a.0.clone())
    }
}

impl Intercept for FaultInterceptor {
    fn name(&self) -> &'static str {
        "DocketFaultInjection"
    }

    fn read_before_attempt(
        &self,
        _context: &BeforeTransmitInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        cfg.interceptor_state().store_put(Attempt(None));
        Ok(())
    }

    fn modify_before_transmit(
        &self,
        context: &mut BeforeTransmitInterceptorContextMut<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let Some((service, operation)) = cfg
            .load::<Metadata>()
            .map(|m| (m.service().to_string(), m.name().to_string()))
        else {
            return Ok(());
        };
        let armed = self.faults.decide(&service, &operation).map(|rule| Armed {
            rule,
            service,
            operation,
            action: self.faults.inner.rules[rule].action.clone(),
        });
        // The HTTP client acts on these two, so they travel on the request.
        if let Some(
            armed @ Armed {
                action:
                    Action::FailBeforeSend { .. }
                    | Action::LoseResponse {
                        surface: Surface::DispatchFailure,
                    },
                ..
            },
        ) = &armed
        {
            context.request_mut().add_extension(armed.clone());
        }
        cfg.interceptor_state().store_put(Attempt(armed));
        Ok(())
    }

    fn read_after_deserialization(
        &self,
        _context: &AfterDeserializationInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        match Self::armed(cfg) {
            Some(
                armed @ Armed {
                    action:
                        Action::LoseResponse {
                            surface: Surface::ResponseError,
                        },
                    ..
                },
            ) => {
                // An interceptor error after deserialization surfaces as ResponseError, which
                // no retry classifier retries.
                cfg.interceptor_state().store_put(Attempt(None));
                self.faults.record(&armed);
                Err(Box::new(LostResponse {
                    service: armed.service,
                    operation: armed.operation,
                }))
            }
            _ => Ok(()),
        }
    }

    fn modify_before_attempt_completion(
        &self,
        context: &mut FinalizerInterceptorContextMut<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let Some(
            armed @ Armed {
                action:
                    Action::LoseResponse {
                        surface: Surface::Timeout,
                    },
                ..
            },
        ) = Self::armed(cfg)
        else {
            return Ok(());
        };
        cfg.interceptor_state().store_put(Attempt(None));
        // Only an attempt that got an answer had its answer lost.
        if context.response().is_none() {
            return Ok(());
        }
        if let Some(result) = context.output_or_error_mut() {
            self.faults.record(&armed);
            *result = Err(OrchestratorError::timeout(Box::new(LostResponse {
                service: armed.service,
                operation: armed.operation,
            })));
        }
        Ok(())
    }
}

/// An HTTP client that answers requests armed with [`Action::FailBeforeSend`] itself, turns the
/// answer to a request armed with a lost response as [`Surface::DispatchFailure`] into an I/O
/// error, and passes every other request to the real client.
#[derive(Debug, Clone)]
pub struct FaultHttpClient {
    inner: SharedHttpClient,
    faults: Faults,
}

impl HttpClient for FaultHttpClient {
    fn http_connector(
        &self,
        settings: &HttpConnectorSettings,
        components: &RuntimeComponents,
    ) -> SharedHttpConnector {
        SharedHttpConnector::new(FaultConnector {
            inner: self.inner.http_connector(settings, components),
            faults: self.faults.clone(),
        })
    }

    fn validate_base_client_config(
        &self,
        runtime_components: &RuntimeComponentsBuilder,
        cfg: &ConfigBag,
    ) -> Result<(), BoxError> {
        self.inner
            .validate_base_client_config(runtime_components, cfg)
    }

    fn validate_final_config(
        &self,
        runtime_components: &RuntimeComponents,
        cfg: &ConfigBag,
    ) -> Result<(), BoxError> {
        self.inner.validate_final_config(runtime_components, cfg)
    }

    fn connector_metadata(
        &self,
    ) -> Option<aws_smithy_runtime_api::client::connector_metadata::ConnectorMetadata> {
        self.inner.connector_metadata()
    }
}

#[derive(Debug)]
struct FaultConnector {
    inner: SharedHttpConnector,
    faults: Faults,
}

impl HttpConnector for FaultConnector {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        match request.extension::<Armed>().cloned() {
            Some(
                armed @ Armed {
                    action: Action::FailBeforeSend { .. },
                    ..
                },
            ) => {
                self.faults.record(&armed);
                HttpConnectorFuture::ready(Ok(synthetic_error(&request, &armed)))
            }
            Some(armed) => {
                // Lose the answer as a broken connection: the request is sent and answered
                // (so the service commits it), then the caller gets an I/O error instead.
                let sent = self.inner.call(request);
                let faults = self.faults.clone();
                HttpConnectorFuture::new(async move {
                    sent.await?;
                    faults.record(&armed);
                    Err(ConnectorError::io(Box::new(LostResponse {
                        service: armed.service,
                        operation: armed.operation,
                    })))
                })
            }
            None => self.inner.call(request),
        }
    }
}

/// The error response a service would send for `armed`'s code, in its protocol: S3's `<Error>`
/// XML, the query protocol's `<ErrorResponse>`, or JSON with `__type` (awsJson) — always with
/// `x-amzn-errortype` too (restJson).
fn synthetic_error(request: &HttpRequest, armed: &Armed) -> HttpResponse {
    let Action::FailBeforeSend { error_code, status } = &armed.action else {
        unreachable!("only fail_before_send is armed on the request")
    };
    let message = format!(
        "injected fault: {} {} failed before sending",
        armed.service, armed.operation
    );
    let content_type = request.headers().get("content-type").unwrap_or("");
    let (body, body_type) = if normalize_service(&armed.service) == "s3" {
        (
            format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{error_code}</Code>\
                 <Message>{message}</Message><RequestId>docket-fault</RequestId></Error>"
            ),
            "application/xml",
        )
    } else if content_type.starts_with("application/x-www-form-urlencoded") {
        (
            format!(
                "<ErrorResponse><Error><Type>Receiver</Type><Code>{error_code}</Code>\
                 <Message>{message}</Message></Error><RequestId>docket-fault</RequestId>\
                 </ErrorResponse>"
            ),
            "text/xml",
        )
    } else {
        (
            serde_json::json!({ "__type": error_code, "message": message }).to_string(),
            if content_type.starts_with("application/x-amz-json") {
                content_type
            } else {
                "application/json"
            },
        )
    };
    let body_type = body_type.to_string();
    let mut response = HttpResponse::new(
        (*status).try_into().expect("validated 4xx/5xx status"),
        SdkBody::from(body),
    );
    let headers = response.headers_mut();
    headers.insert("content-type", body_type);
    headers.insert("x-amzn-errortype", error_code.clone());
    headers.insert("x-amzn-requestid", "docket-fault");
    headers.insert("x-amz-request-id", "docket-fault");
    response
}

/// The HTTP client a config would use by default (the SDK's default HTTPS client), to wrap when
/// the config names none.
fn default_http_client() -> Option<SharedHttpClient> {
    let plugin = aws_smithy_runtime::client::defaults::default_http_client_plugin_v2(
        BehaviorVersion::latest(),
    )?;
    let components = RuntimeComponentsBuilder::new("docket-faults");
    let components: Cow<'_, RuntimeComponentsBuilder> = plugin.runtime_components(&components);
    components.http_client()
}

/// SDK client config builders that faults can be installed on.
pub trait InstallFaults: Sized {
    /// Installs `faults` (interceptor + wrapped HTTP client); a no-op for [`Faults::none`].
    fn install_faults(self, faults: &Faults) -> Self;
}

macro_rules! install_faults_for {
    ($($sdk:ident),*) => {$(
        impl InstallFaults for $sdk::config::Builder {
            fn install_faults(self, faults: &Faults) -> Self {
                if faults.is_empty() {
                    return self;
                }
                let inner = self.clone().build().http_client().or_else(default_http_client);
                let builder = self.interceptor(faults.interceptor());
                match inner {
                    Some(inner) => builder.http_client(faults.http_client(inner)),
                    None => {
                        tracing::warn!("no HTTP client to wrap: fail_before_send is not injected");
                        builder
                    }
                }
            }
        }
    )*};
}

install_faults_for!(
    aws_sdk_s3,
    aws_sdk_dynamodb,
    aws_sdk_textract,
    aws_sdk_sfn,
    aws_sdk_eventbridge,
    aws_sdk_lambda,
    aws_sdk_sqs
);
