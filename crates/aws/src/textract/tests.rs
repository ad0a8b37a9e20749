//! The client as it meets a provider that refuses: against a stand-in Textract on 127.0.0.1
//! that answers every call with `ProvisionedThroughputExceededException` and counts the
//! requests it read, one call of ours is one request on the wire.

use std::io::{ErrorKind as IoErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use aws_config::BehaviorVersion;
use aws_sdk_textract::config::{Credentials, Region};
use docket_core::ids::Tenant;

use super::*;

const REFUSAL: &str = r#"{"__type":"ProvisionedThroughputExceededException","Message":"The number of requests exceeded your throughput limit."}"#;

/// A stand-in Textract refusing every call; stops when dropped.
struct Refusing {
    port: u16,
    requests: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    server: Option<JoinHandle<()>>,
}

impl Refusing {
    fn start() -> Refusing {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let (requests, stop) = (Arc::<AtomicUsize>::default(), Arc::<AtomicBool>::default());
        let (counted, stopping) = (requests.clone(), stop.clone());
        let server = std::thread::spawn(move || {
            while !stopping.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((conn, _)) => refuse_each(conn, &counted),
                    Err(e) if e.kind() == IoErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Err(e) => panic!("accept: {e}"),
                }
            }
        });
        Refusing {
            port,
            requests,
            stop,
            server: Some(server),
        }
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

impl Drop for Refusing {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(server) = self.server.take() {
            let _ = server.join();
        }
    }
}

/// Reads each request of a connection (headers, then `Content-Length` bytes), counts it and
/// answers with the refusal, until the client closes or is quiet for a while.
fn refuse_each(mut conn: TcpStream, requests: &AtomicUsize) {
    conn.set_nonblocking(false).unwrap();
    conn.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut buffered = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let Some(end) = buffered.windows(4).position(|w| w == b"\r\n\r\n") else {
            match conn.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buffered.extend_from_slice(&chunk[..n]),
            }
            continue;
        };
        let head = String::from_utf8_lossy(&buffered[..end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .map_or(0, |v| v.trim().parse().unwrap());
        while buffered.len() < end + 4 + length {
            match conn.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buffered.extend_from_slice(&chunk[..n]),
            }
        }
        buffered.drain(..end + 4 + length);
        requests.fetch_add(1, Ordering::SeqCst);
        let answer = format!(
            "HTTP/1.1 400 Bad Request\r\ncontent-type: application/x-amz-json-1.1\r\n\
             x-amzn-requestid: refused\r\ncontent-length: {}\r\n\r\n{REFUSAL}",
            REFUSAL.len()
        );
        if conn.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}

/// A config as a Lambda loads it (the SDK's standard retries: three attempts), for `port`.
async fn sdk_config(port: u16) -> aws_config::SdkConfig {
    aws_config::defaults(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("test", "test", None, None, "test"))
        .endpoint_url(format!("http://127.0.0.1:{port}"))
        .load()
        .await
}

fn operation() -> OperationId {
    let run = docket_core::memory::test_run(&Tenant::parse("acme").unwrap(), "a.png", "v1");
    OperationId::new(&run, "ocr", None)
}

#[tokio::test]
async fn a_refused_call_is_one_request_the_sdk_does_not_send_again_outside_admission() {
    let provider = Refusing::start();
    let textract = TextractOcr::new(&sdk_config(provider.port).await);
    let document = ObjectRef::new("inbox", "acme/a.png");

    let read = textract.detect(&operation(), &document).await;
    let started = textract.start(&operation(), &document, "run").await;

    let read = read.expect_err("refused");
    assert_eq!(read.name(), "Transient.Dependency", "{read}");
    assert!(
        read.to_string()
            .contains("ProvisionedThroughputExceededException"),
        "{read}"
    );
    let started = started.expect_err("refused");
    assert_eq!(started.name(), "Transient.Dependency", "{started}");
    assert_eq!(provider.requests(), 2, "one request a call, no SDK retry");
}
