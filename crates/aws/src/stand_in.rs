//! For unit tests of the adapters: a stand-in service on 127.0.0.1 that an SDK client is
//! pointed at (its endpoint URL). It reads each request (the head, then `Content-Length` bytes
//! of body), keeps it, and answers what the test scripted, one request a connection. It stops
//! when dropped, however many requests came: a client that sends more than a test expects gets
//! an answer (a scripted list that has run out answers 500) and the test fails on what it
//! counts, rather than hanging.

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::Value;

/// One answer: the status, extra headers, the body.
pub(crate) type Answer = (u16, Vec<(&'static str, &'static str)>, String);

/// One request as the stand-in read it: its request line and its body (`Null` if none or not
/// JSON).
pub(crate) type Seen = (String, Value);

/// An SDK config as a Lambda loads it (the default chain: the SDK's standard retries, three
/// attempts), with test credentials, sending every request to `127.0.0.1:port`.
pub(crate) async fn sdk_config(port: u16) -> aws_config::SdkConfig {
    aws_config::defaults(aws_config::BehaviorVersion::latest())
        .region(aws_config::Region::new("us-east-1"))
        .credentials_provider(aws_sdk_dynamodb::config::Credentials::new(
            "test", "test", None, None, "test",
        ))
        .endpoint_url(format!("http://127.0.0.1:{port}"))
        .load()
        .await
}

/// A stand-in service; see the module docs.
pub(crate) struct StandIn {
    pub(crate) port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<AtomicBool>,
    server: Option<JoinHandle<()>>,
}

impl StandIn {
    /// Answers the `n`th request (from 0) with `answer(n)`.
    pub(crate) fn answering(mut answer: impl FnMut(usize) -> Answer + Send + 'static) -> StandIn {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let (seen, stop) = (
            Arc::<Mutex<Vec<Seen>>>::default(),
            Arc::<AtomicBool>::default(),
        );
        let (kept, stopping) = (seen.clone(), stop.clone());
        let server = std::thread::spawn(move || {
            while !stopping.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((conn, _)) => {
                        let Some(request) = read_request(&conn) else {
                            continue;
                        };
                        let n = {
                            let mut kept = kept.lock().unwrap();
                            kept.push(request);
                            kept.len() - 1
                        };
                        write_answer(conn, answer(n));
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Err(e) => panic!("accept: {e}"),
                }
            }
        });
        StandIn {
            port,
            seen,
            stop,
            server: Some(server),
        }
    }

    /// Answers with each of `answers` in turn, then with 500.
    pub(crate) fn scripted(answers: Vec<Answer>) -> StandIn {
        StandIn::answering(move |n| {
            answers.get(n).cloned().unwrap_or_else(|| {
                (
                    500,
                    vec![],
                    format!(r#"{{"message":"request {n} was not scripted"}}"#),
                )
            })
        })
    }

    /// The requests read so far, in order.
    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(server) = self.server.take() {
            let _ = server.join();
        }
    }
}

/// The request on `conn`, or `None` if the client hung up (or was quiet for a second) first.
fn read_request(mut conn: &TcpStream) -> Option<Seen> {
    conn.set_nonblocking(false).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    let mut request = Vec::new();
    let mut chunk = [0u8; 4096];
    let mut more = |request: &mut Vec<u8>| match conn.read(&mut chunk) {
        Ok(0) | Err(_) => None,
        Ok(n) => {
            request.extend_from_slice(&chunk[..n]);
            Some(())
        }
    };
    let end = loop {
        if let Some(i) = request.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        more(&mut request)?;
    };
    let head = String::from_utf8_lossy(&request[..end]).into_owned();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().unwrap())
        })
        .unwrap_or(0);
    while request.len() < end + length {
        more(&mut request)?;
    }
    let line = head.lines().next().unwrap_or_default().to_string();
    let body = serde_json::from_slice(&request[end..end + length]).unwrap_or(Value::Null);
    Some((line, body))
}

/// Writes `answer` and closes the connection.
fn write_answer(mut conn: TcpStream, (status, headers, body): Answer) {
    let mut out = format!(
        "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n\
         Content-Type: application/json\r\n",
        body.len()
    );
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(&body);
    let _ = conn.write_all(out.as_bytes());
}
