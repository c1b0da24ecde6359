//! An error and its sources on one line: a TLS or connection failure says why only in a source.

/// `error` followed by each source that adds something (`: `-separated), so a log line or an
/// operator message shows the cause a transport error hides in its chain.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("{message}")]
    struct Layer {
        message: &'static str,
        #[source]
        source: Option<Box<Layer>>,
    }

    fn layer(message: &'static str, source: Option<Layer>) -> Layer {
        Layer {
            message,
            source: source.map(Box::new),
        }
    }

    #[test]
    fn every_source_shows_once_in_order() {
        let error = layer(
            "transport error",
            Some(layer("tls handshake", Some(layer("unknown issuer", None)))),
        );
        assert_eq!(
            error_chain(&error),
            "transport error: tls handshake: unknown issuer"
        );
    }

    #[test]
    fn a_source_already_in_the_message_is_not_repeated() {
        let error = layer("cannot connect: refused", Some(layer("refused", None)));
        assert_eq!(error_chain(&error), "cannot connect: refused");
    }
}
