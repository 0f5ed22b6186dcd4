//! Typed errors shared by every codectx crate, and the one mapping between them and
//! `tonic::Status` (with a machine-readable `ErrorDetail` in the status details).
//!
//! Messages say what failed and what to change, e.g. "task is 9,412 bytes; the limit is
//! 8,192 bytes". The stable `reason` strings are listed in `docs/error-codes.md`.

use std::fmt;

use codectx_proto::common::v1::ErrorDetail;
use prost::Message;
use tonic::{Code, Status};

/// What kind of failure an [`Error`] is; decides the gRPC code and the default reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A request field is malformed.
    InvalidArgument,
    /// A request exceeds a documented cap (bytes, counts, ...).
    LimitExceeded,
    /// The thing asked for does not exist (or is not visible to the caller).
    NotFound,
    /// A selector matched more than one entry; suggestions list the choices.
    Ambiguous,
    /// The caller is known but may not do this.
    PermissionDenied,
    /// No valid credential or tenant context.
    Unauthenticated,
    /// Something the answer depends on changed since it was referenced.
    Stale,
    /// The thing already exists.
    AlreadyExists,
    /// A dependency (a backend, another service, the model) is not available now.
    Unavailable,
    /// The operation ran out of time.
    DeadlineExceeded,
    /// The capability is not built yet, or not enabled by configuration.
    Unimplemented,
    /// A bug or an unexpected backend failure.
    Internal,
}

impl ErrorKind {
    /// The stable default reason string for this kind.
    pub fn reason(self) -> &'static str {
        match self {
            Self::InvalidArgument => "invalid_argument",
            Self::LimitExceeded => "limit_exceeded",
            Self::NotFound => "not_found",
            Self::Ambiguous => "ambiguous",
            Self::PermissionDenied => "denied",
            Self::Unauthenticated => "unauthenticated",
            Self::Stale => "stale",
            Self::AlreadyExists => "already_exists",
            Self::Unavailable => "unavailable",
            Self::DeadlineExceeded => "deadline_exceeded",
            Self::Unimplemented => "unimplemented",
            Self::Internal => "internal",
        }
    }

    fn code(self) -> Code {
        match self {
            Self::InvalidArgument | Self::LimitExceeded => Code::InvalidArgument,
            Self::NotFound => Code::NotFound,
            Self::Ambiguous | Self::Stale => Code::FailedPrecondition,
            Self::PermissionDenied => Code::PermissionDenied,
            Self::Unauthenticated => Code::Unauthenticated,
            Self::AlreadyExists => Code::AlreadyExists,
            Self::Unavailable => Code::Unavailable,
            Self::DeadlineExceeded => Code::DeadlineExceeded,
            Self::Unimplemented => Code::Unimplemented,
            Self::Internal => Code::Internal,
        }
    }

    fn from_code(code: Code) -> Self {
        match code {
            Code::InvalidArgument | Code::OutOfRange => Self::InvalidArgument,
            Code::NotFound => Self::NotFound,
            Code::FailedPrecondition => Self::Stale,
            Code::PermissionDenied => Self::PermissionDenied,
            Code::Unauthenticated => Self::Unauthenticated,
            Code::AlreadyExists => Self::AlreadyExists,
            Code::Unavailable | Code::ResourceExhausted | Code::Aborted | Code::Cancelled => {
                Self::Unavailable
            }
            Code::DeadlineExceeded => Self::DeadlineExceeded,
            Code::Unimplemented => Self::Unimplemented,
            _ => Self::Internal,
        }
    }

    fn from_reason(reason: &str) -> Option<Self> {
        [
            Self::InvalidArgument,
            Self::LimitExceeded,
            Self::NotFound,
            Self::Ambiguous,
            Self::PermissionDenied,
            Self::Unauthenticated,
            Self::Stale,
            Self::AlreadyExists,
            Self::Unavailable,
            Self::DeadlineExceeded,
            Self::Unimplemented,
            Self::Internal,
        ]
        .into_iter()
        .find(|kind| kind.reason() == reason)
    }
}

/// A codectx error: a kind, a stable reason, a message that says what to change, and
/// optional structured detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    // Boxed so `Result<T, Error>` stays one pointer wide on the happy path.
    inner: Box<Inner>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Inner {
    kind: ErrorKind,
    reason: String,
    message: String,
    field: String,
    limit: Option<u64>,
    actual: Option<u64>,
    suggestions: Vec<String>,
    /// Decoded from a status that carried no codectx detail (a transport failure, a
    /// library's own status): its message was not written for callers.
    foreign: bool,
}

/// The reason of an `unavailable` answer whose peer is alive and still loading what the
/// answer needs ([`Error::loading`]).
pub const LOADING: &str = "loading";

/// Result alias used across codectx libraries.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error of `kind` with its default reason.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            inner: Box::new(Inner {
                kind,
                reason: kind.reason().to_owned(),
                message: message.into(),
                field: String::new(),
                limit: None,
                actual: None,
                suggestions: Vec::new(),
                foreign: false,
            }),
        }
    }

    /// The error as an untrusted caller (an agent) may see it. Typed errors that say what
    /// to change pass unchanged; internal failures, unavailable backends and statuses from
    /// outside codectx (transport errors) keep their kind and reason but get a fixed
    /// message, so no backend text, path or address reaches a tenant. Log the original.
    pub fn for_agent(&self) -> Error {
        if self.is_loading() && !self.inner.foreign {
            return self.clone();
        }
        let message = match self.inner.kind {
            ErrorKind::Internal => {
                "codectx failed to answer (an internal error); the operators' logs have the details"
            }
            ErrorKind::Unavailable => {
                "a service this answer needs is not available now; retry in a moment"
            }
            _ if self.inner.foreign => {
                "an internal hop refused the request; check the arguments against the tool's schema and limits"
            }
            _ => return self.clone(),
        };
        Error::new(self.inner.kind, message).with_reason(self.inner.reason.clone())
    }

    /// True when the caller-facing form differs from this error (see [`Error::for_agent`]).
    pub fn is_redacted_for_agent(&self) -> bool {
        self.inner.foreign
            || (matches!(
                self.inner.kind,
                ErrorKind::Internal | ErrorKind::Unavailable
            ) && !self.is_loading())
    }

    pub fn invalid_argument(field: &str, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidArgument, message).with_field(field)
    }

    /// A request value over a cap. `unit` names what is counted ("bytes", "files", ...).
    pub fn limit_exceeded(field: &str, actual: u64, limit: u64, unit: &str) -> Self {
        let message = format!(
            "{field} is {} {unit}; the limit is {} {unit}: shorten or split it",
            group_thousands(actual),
            group_thousands(limit)
        );
        let mut error = Self::new(ErrorKind::LimitExceeded, message).with_field(field);
        error.inner.limit = Some(limit);
        error.inner.actual = Some(actual);
        error
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, message)
    }

    pub fn ambiguous(message: impl Into<String>, suggestions: Vec<String>) -> Self {
        Self::new(ErrorKind::Ambiguous, message).with_suggestions(suggestions)
    }

    pub fn permission_denied(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::PermissionDenied, message)
    }

    pub fn unauthenticated(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unauthenticated, message)
    }

    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unavailable, message)
    }

    /// Something this answer needs (an index, a model) is still loading in a live peer,
    /// which goes on loading: `unavailable` with reason [`LOADING`]. The message says what
    /// is loading and when to ask again, in words written for callers (no backend text),
    /// so it reaches agents unchanged; clients do not send the request again (the peer
    /// already waited), the caller decides.
    pub fn loading(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unavailable, message).with_reason(LOADING)
    }

    /// True for a [`Error::loading`] answer.
    pub fn is_loading(&self) -> bool {
        self.inner.kind == ErrorKind::Unavailable && self.inner.reason == LOADING
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, message)
    }

    /// An RPC whose capability is not built yet; the message names the capability.
    pub fn unimplemented(rpc: &str, capability: &str) -> Self {
        Self::new(
            ErrorKind::Unimplemented,
            format!(
                "{rpc} is part of the {capability} capability, which this build does not implement yet"
            ),
        )
    }

    /// Overrides the default reason with a more specific stable one (e.g. `budget_exceeded`).
    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.inner.reason = reason.into();
        self
    }

    /// Choices to offer the caller; only ever drawn from what the caller may see.
    pub fn with_suggestions(mut self, suggestions: Vec<String>) -> Self {
        self.inner.suggestions = suggestions;
        self
    }

    pub fn with_field(mut self, field: &str) -> Self {
        self.inner.field = field.to_owned();
        self
    }

    pub fn kind(&self) -> ErrorKind {
        self.inner.kind
    }

    pub fn reason(&self) -> &str {
        &self.inner.reason
    }

    pub fn message(&self) -> &str {
        &self.inner.message
    }

    pub fn field(&self) -> &str {
        &self.inner.field
    }

    pub fn limit(&self) -> Option<u64> {
        self.inner.limit
    }

    pub fn actual(&self) -> Option<u64> {
        self.inner.actual
    }

    pub fn suggestions(&self) -> &[String] {
        &self.inner.suggestions
    }

    /// The structured detail carried in status details and MCP error payloads.
    pub fn detail(&self) -> ErrorDetail {
        let inner = &*self.inner;
        ErrorDetail {
            reason: inner.reason.clone(),
            message: inner.message.clone(),
            field: inner.field.clone(),
            limit: inner.limit,
            actual: inner.actual,
            suggestions: inner.suggestions.clone(),
        }
    }

    /// The one mapping from codectx errors to gRPC statuses.
    pub fn to_status(&self) -> Status {
        Status::with_details(
            self.inner.kind.code(),
            self.inner.message.clone(),
            self.detail().encode_to_vec().into(),
        )
    }

    /// Recovers a typed error from a status returned by another codectx service (or any
    /// gRPC peer: statuses without codectx detail keep their code and message).
    pub fn from_status(status: &Status) -> Self {
        match ErrorDetail::decode(status.details()) {
            Ok(detail) if !detail.reason.is_empty() => {
                let kind = ErrorKind::from_reason(&detail.reason)
                    .unwrap_or_else(|| ErrorKind::from_code(status.code()));
                Self {
                    inner: Box::new(Inner {
                        kind,
                        reason: detail.reason,
                        message: detail.message,
                        field: detail.field,
                        limit: detail.limit,
                        actual: detail.actual,
                        suggestions: detail.suggestions,
                        foreign: false,
                    }),
                }
            }
            _ => {
                let mut error = Self::new(ErrorKind::from_code(status.code()), status.message());
                error.inner.foreign = true;
                error
            }
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.inner.message)
    }
}

impl std::error::Error for Error {}

impl From<Error> for Status {
    fn from(error: Error) -> Self {
        error.to_status()
    }
}

impl From<Status> for Error {
    fn from(status: Status) -> Self {
        Self::from_status(&status)
    }
}

/// `12345` -> `"12,345"`, for messages people read.
pub fn group_thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_message_names_field_and_numbers() {
        let error = Error::limit_exceeded("task", 9412, 8192, "bytes");
        assert_eq!(
            error.message(),
            "task is 9,412 bytes; the limit is 8,192 bytes: shorten or split it"
        );
        assert_eq!(error.reason(), "limit_exceeded");
    }

    #[test]
    fn status_round_trip_keeps_detail() {
        let error = Error::ambiguous(
            "two entries named api",
            vec!["api-a".into(), "api-b".into()],
        )
        .with_field("repository");
        let status = error.to_status();
        assert_eq!(status.code(), Code::FailedPrecondition);
        let back = Error::from_status(&status);
        assert_eq!(back, error);
    }

    #[test]
    fn custom_reason_survives_round_trip() {
        let error =
            Error::new(ErrorKind::LimitExceeded, "does not fit").with_reason("budget_exceeded");
        let back = Error::from_status(&error.to_status());
        assert_eq!(back.reason(), "budget_exceeded");
        assert_eq!(back.to_status().code(), Code::InvalidArgument);
    }

    #[test]
    fn foreign_status_keeps_code() {
        let back = Error::from_status(&Status::unavailable("connection refused"));
        assert_eq!(back.kind(), ErrorKind::Unavailable);
        assert_eq!(back.message(), "connection refused");
    }

    #[test]
    fn thousands() {
        assert_eq!(group_thousands(0), "0");
        assert_eq!(group_thousands(999), "999");
        assert_eq!(group_thousands(1000), "1,000");
        assert_eq!(group_thousands(4_194_304), "4,194,304");
    }

    #[test]
    fn agents_never_see_backend_or_transport_text() {
        let backend = Error::unavailable("vector: connection refused at 10.0.0.7:19530");
        let shown = backend.for_agent();
        assert_eq!(shown.kind(), ErrorKind::Unavailable);
        assert!(!shown.message().contains("10.0.0.7"), "{shown}");
        let transport = Error::from_status(&Status::out_of_range(
            "decoded message length too large: found 5000000 bytes, the limit is: 4194304 bytes",
        ));
        assert!(transport.is_redacted_for_agent());
        assert!(!transport.for_agent().message().contains("4194304"));
        // Typed errors written for callers pass unchanged.
        let typed = Error::limit_exceeded("task", 9_412, 8_192, "bytes");
        assert_eq!(typed.for_agent(), typed);
        let relayed = Error::from_status(&typed.to_status());
        assert_eq!(relayed.for_agent().message(), typed.message());
    }

    /// An index or model still loading is a typed `unavailable` with reason `loading`:
    /// its message is written for callers (what is loading, when to ask again), so it
    /// reaches an agent unchanged, across a hop too, instead of the fixed "not available"
    /// text that backend failures get.
    #[test]
    fn a_loading_answer_reaches_the_agent_as_written() {
        let loading = Error::unavailable(
            "the lexical index of this repository is still loading; retry in a few seconds",
        )
        .with_reason("loading");
        let relayed = Error::from_status(&loading.to_status());
        assert_eq!(relayed.kind(), ErrorKind::Unavailable);
        assert_eq!(relayed.reason(), "loading");
        assert_eq!(relayed.for_agent(), loading);
        assert!(!relayed.is_redacted_for_agent());
    }
}
