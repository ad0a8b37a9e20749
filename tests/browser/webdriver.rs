//! A small W3C WebDriver client for the browser tests: Debian's `chromedriver` driving Debian's
//! headless `chromium`, over the protocol's JSON-over-HTTP (the Rust WebDriver crates bring
//! dependencies `deny.toml` refuses). Only what the tests use: sessions, navigation, elements
//! by CSS selector, clicks, typing, keys, scripts, screenshots. Every wait is bounded.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::process::{Child, Command};

/// The W3C name of an element reference in answers.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// How long a wait for the page lasts before the test fails.
pub const WAIT: Duration = Duration::from_secs(30);

/// A running `chromedriver`, stopped when dropped with every browser it started (also when a
/// test panics before it quits them), and their profiles deleted.
pub struct Driver {
    child: Child,
    base: String,
    http: reqwest::Client,
    profiles: Mutex<Vec<PathBuf>>,
}

impl Drop for Driver {
    fn drop(&mut self) {
        // chromedriver leads its own process group, and the browsers it starts stay in it:
        // killing the group leaves no Chromium behind.
        if let Some(pid) = self.child.id() {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &format!("-{pid}")])
                .status();
        }
        for profile in self.profiles.lock().unwrap().drain(..) {
            let _ = std::fs::remove_dir_all(profile);
        }
    }
}

/// A free loopback port (bound, read, released).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Driver {
    /// Starts `chromedriver` (`CHROMEDRIVER`, default `/usr/bin/chromedriver`) and waits until
    /// it is ready.
    pub async fn start() -> Driver {
        let bin = std::env::var("CHROMEDRIVER").unwrap_or_else(|_| "/usr/bin/chromedriver".into());
        let port = free_port();
        let child = Command::new(&bin)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("start {bin} (make setup installs chromium-driver): {e}"));
        let driver = Driver {
            child,
            base: format!("http://127.0.0.1:{port}"),
            http: reqwest::Client::new(),
            profiles: Mutex::new(Vec::new()),
        };
        let deadline = Instant::now() + WAIT;
        loop {
            let ready = driver
                .http
                .get(format!("{}/status", driver.base))
                .send()
                .await
                .ok();
            if let Some(answer) = ready {
                let status: Value = answer.json().await.unwrap_or_default();
                if status["value"]["ready"] == true {
                    return driver;
                }
            }
            assert!(Instant::now() < deadline, "chromedriver did not get ready");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// A new headless Chromium window of `width` x `height`.
    pub async fn browser(&self, width: u32, height: u32) -> Browser {
        let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
        let profile = std::env::temp_dir().join(format!(
            "docket-chromium-{}-{}",
            std::process::id(),
            free_port()
        ));
        self.profiles.lock().unwrap().push(profile.clone());
        // No sandbox (tests run as root); no background connections (this machine has no
        // internet, and Chromium retries refused connections many at a time).
        let args = vec![
            "--headless=new".to_string(),
            "--no-sandbox".into(),
            "--disable-gpu".into(),
            "--disable-dev-shm-usage".into(),
            "--disable-background-networking".into(),
            "--disable-component-update".into(),
            "--disable-sync".into(),
            "--disable-quic".into(),
            "--no-first-run".into(),
            format!("--user-data-dir={}", profile.display()),
            format!("--window-size={width},{height}"),
        ];
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": chromium, "args": args},
            "goog:loggingPrefs": {"browser": "ALL"},
        }}});
        let answer = self.post("/session", &capabilities).await;
        let session = answer["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no WebDriver session: {answer}"))
            .to_string();
        Browser {
            base: format!("{}/session/{session}", self.base),
            http: self.http.clone(),
        }
    }

    async fn post(&self, path: &str, body: &Value) -> Value {
        call(
            &self.http,
            reqwest::Method::POST,
            &format!("{}{path}", self.base),
            Some(body),
        )
        .await
    }

    /// Stops chromedriver and the browsers it started.
    pub async fn stop(self) {
        drop(self);
    }
}

/// One WebDriver command; panics on a transport error, answers the JSON (errors included: their
/// `value.error`).
async fn call(
    http: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
    body: Option<&Value>,
) -> Value {
    let mut request = http.request(method, url);
    if let Some(body) = body {
        request = request.json(body);
    }
    let answer = request
        .send()
        .await
        .unwrap_or_else(|e| panic!("WebDriver {url}: {e}"));
    answer.json().await.unwrap_or_default()
}

/// A browser window (a WebDriver session).
pub struct Browser {
    base: String,
    http: reqwest::Client,
}

/// An element of the page.
#[derive(Clone)]
pub struct Element(String);

impl Browser {
    async fn cmd(&self, method: reqwest::Method, path: &str, body: Option<&Value>) -> Value {
        let answer = call(&self.http, method, &format!("{}{path}", self.base), body).await;
        answer["value"].clone()
    }

    async fn ok(&self, method: reqwest::Method, path: &str, body: Option<&Value>) -> Value {
        let value = self.cmd(method, path, body).await;
        if let Some(error) = value.get("error") {
            panic!("WebDriver {path}: {error}: {}", value["message"]);
        }
        value
    }

    /// Opens `url`.
    pub async fn go(&self, url: &str) {
        self.ok(reqwest::Method::POST, "/url", Some(&json!({"url": url})))
            .await;
    }

    /// The elements matching `css` now (maybe none).
    pub async fn all(&self, css: &str) -> Vec<Element> {
        let body = json!({"using": "css selector", "value": css});
        let found = self
            .ok(reqwest::Method::POST, "/elements", Some(&body))
            .await;
        found
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|e| e[ELEMENT].as_str().map(|id| Element(id.to_string())))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Waits (bounded) until `css` matches, and answers the first match.
    pub async fn find(&self, css: &str) -> Element {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(e) = self.all(css).await.into_iter().next() {
                return e;
            }
            assert!(
                Instant::now() < deadline,
                "nothing matched {css:?} within {WAIT:?}; the page: {}",
                self.text_of_body().await
            );
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
    }

    /// Waits (bounded) until `css` matches exactly `n` elements, and answers them.
    pub async fn find_n(&self, css: &str, n: usize) -> Vec<Element> {
        let deadline = Instant::now() + WAIT;
        loop {
            let found = self.all(css).await;
            if found.len() == n {
                return found;
            }
            assert!(
                Instant::now() < deadline,
                "{css:?} matched {} elements, not {n}, within {WAIT:?}; the page: {}",
                found.len(),
                self.text_of_body().await
            );
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
    }

    /// The visible text of the whole page (for failure messages).
    pub async fn text_of_body(&self) -> String {
        match self.all("body").await.into_iter().next() {
            Some(body) => self.text(&body).await,
            None => String::new(),
        }
    }

    pub async fn click(&self, e: &Element) {
        let path = format!("/element/{}/click", e.0);
        self.ok(reqwest::Method::POST, &path, Some(&json!({})))
            .await;
    }

    pub async fn clear(&self, e: &Element) {
        let path = format!("/element/{}/clear", e.0);
        self.ok(reqwest::Method::POST, &path, Some(&json!({})))
            .await;
    }

    /// Types `text` into `e`.
    pub async fn type_into(&self, e: &Element, text: &str) {
        let path = format!("/element/{}/value", e.0);
        self.ok(reqwest::Method::POST, &path, Some(&json!({"text": text})))
            .await;
    }

    /// Presses and releases `key` (one character) on whatever has the focus.
    pub async fn press(&self, key: &str) {
        let actions = json!({"actions": [{"type": "key", "id": "keyboard", "actions": [
            {"type": "keyDown", "value": key}, {"type": "keyUp", "value": key}
        ]}]});
        self.ok(reqwest::Method::POST, "/actions", Some(&actions))
            .await;
    }

    pub async fn text(&self, e: &Element) -> String {
        let path = format!("/element/{}/text", e.0);
        let v = self.ok(reqwest::Method::GET, &path, None).await;
        v.as_str().unwrap_or_default().to_string()
    }

    pub async fn attribute(&self, e: &Element, name: &str) -> Option<String> {
        let path = format!("/element/{}/attribute/{name}", e.0);
        let v = self.ok(reqwest::Method::GET, &path, None).await;
        v.as_str().map(String::from)
    }

    /// The element's `value` property (an input's current text).
    pub async fn value(&self, e: &Element) -> String {
        let path = format!("/element/{}/property/value", e.0);
        let v = self.ok(reqwest::Method::GET, &path, None).await;
        v.as_str().unwrap_or_default().to_string()
    }

    /// Runs `script` with `args` (elements as references) and answers its result.
    pub async fn script(&self, script: &str, args: &[Value]) -> Value {
        let body = json!({"script": script, "args": args});
        self.ok(reqwest::Method::POST, "/execute/sync", Some(&body))
            .await
    }

    /// A reference to `e` to pass to [`Browser::script`].
    pub fn arg(e: &Element) -> Value {
        json!({ ELEMENT: e.0 })
    }

    /// The window as a PNG.
    pub async fn screenshot(&self) -> Vec<u8> {
        let v = self.ok(reqwest::Method::GET, "/screenshot", None).await;
        let b64 = v.as_str().expect("a base64 screenshot");
        aws_smithy_types::base64::decode(b64).expect("base64 PNG")
    }

    /// The browser console's messages since the last call (chromedriver's log endpoint).
    pub async fn console(&self) -> Vec<String> {
        let body = json!({"type": "browser"});
        let v = self.ok(reqwest::Method::POST, "/se/log", Some(&body)).await;
        v.as_array()
            .map(|a| {
                a.iter()
                    .map(|m| format!("{} {}", m["level"], m["message"]))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Ends the session (closes the window).
    pub async fn quit(self) {
        let _ = self.cmd(reqwest::Method::DELETE, "", None).await;
    }
}
