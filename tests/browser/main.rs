//! The review page in a real browser: `docket review serve` as a reviewer, headless Chromium
//! through chromedriver (Debian's `chromium` and `chromium-driver`, installed by `make setup`),
//! against the deployed local stack. What a reviewer does on the page must end in the pipeline
//! as a CLI decision would: checked at the wire (the run's result, the audit chain).

mod webdriver;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use docket_e2e::render;
use docket_e2e::reviewers::{
    ambiguous_invoice_lines, docket, docket_bin, json_of, pending_task, pending_task_of, reviewer,
    wait_for_status, Session,
};
use docket_e2e::stack::{invoice_pdf_of_two_pages, outputs_path, tenant, Stack};
use docket_e2e::util;
use serde_json::Value;
use tokio::process::{Child, Command};

use webdriver::{free_port, Browser, Driver};

/// `docket review serve` as `session`, on a free port; stopped when dropped.
struct Page {
    url: String,
    _server: Child,
}

impl Page {
    async fn serve(session: &Session) -> Page {
        let port = free_port();
        let mut cmd = Command::new(docket_bin());
        cmd.args(["review", "serve", "--port", &port.to_string()])
            .args(["--outputs", &outputs_path()])
            .env("AWS_ENDPOINT_URL", util::endpoint())
            .env("AWS_REGION", "us-east-1")
            .env_remove("AWS_PROFILE")
            .stdout(Stdio::null())
            .kill_on_drop(true);
        for (k, v) in &session.env {
            cmd.env(k, v);
        }
        let server = cmd.spawn().expect("start docket review serve");
        let url = format!("http://127.0.0.1:{port}/");
        let deadline = Instant::now() + webdriver::WAIT;
        while reqwest::get(&url).await.is_err() {
            assert!(Instant::now() < deadline, "review serve did not listen");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Page {
            url,
            _server: server,
        }
    }

    fn task_url(&self, task: &str) -> String {
        format!("{}#/tasks/{task}", self.url)
    }
}

/// Where the tests write their screenshots (README shows the ones in docs/screenshots, copied
/// from here by `make screenshots`).
fn screenshot_path(name: &str) -> PathBuf {
    let dir = std::env::var("DOCKET_SCREENSHOTS").map_or_else(
        |_| util::workspace_root().join("target/screenshots"),
        PathBuf::from,
    );
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The element's box relative to `within`'s, as fractions of `within`'s size.
async fn relative_box(
    browser: &Browser,
    e: &webdriver::Element,
    within: &webdriver::Element,
) -> Value {
    browser
        .script(
            "const a = arguments[0].getBoundingClientRect(), b = arguments[1].getBoundingClientRect();
             return {left: (a.left - b.left) / b.width, top: (a.top - b.top) / b.height,
                     width: a.width / b.width, height: a.height / b.height};",
            &[Browser::arg(e), Browser::arg(within)],
        )
        .await
}

/// Whom the page says it is signed in as, once `GET /me` has answered (its text says so too).
async fn signed_in_as(browser: &Browser) -> String {
    let whoami = browser.find("#whoami[data-reviewer]").await;
    let reviewer = browser.attribute(&whoami, "data-reviewer").await.unwrap();
    let text = browser.text(&whoami).await;
    assert!(text.contains(&reviewer), "{text:?}");
    reviewer
}

/// The page kept to its own Content-Security-Policy (a refused inline style would leave the
/// outlines unplaced; a refused script, a document undrawn).
async fn assert_no_policy_refusal(browser: &Browser) {
    let console = browser.console().await;
    let refused: Vec<_> = console
        .iter()
        .filter(|m| m.contains("Content Security Policy"))
        .collect();
    assert!(refused.is_empty(), "{refused:?}");
}

/// The invoice date's outline is on the drawn page 1 `drawn`, and of a real size.
async fn assert_date_outlined_on(browser: &Browser, drawn: &webdriver::Element) {
    let outline = browser
        .find(".page[data-page=\"1\"] .outline[data-field=\"invoice_date\"]")
        .await;
    let b = relative_box(browser, &outline, drawn).await;
    for side in ["left", "top", "width", "height"] {
        let v = b[side].as_f64().unwrap();
        assert!(
            (0.0..=1.0).contains(&v),
            "the date's outline {side} {v} is on its page: {b}"
        );
    }
    assert!(
        b["width"].as_f64().unwrap() > 0.01 && b["height"].as_f64().unwrap() > 0.003,
        "the date's outline has a size: {b}"
    );
}

#[tokio::test]
async fn a_reviewer_corrects_the_date_on_the_page_and_the_run_completes_with_it() {
    let stack = Stack::load().await;
    let tenant = tenant();
    let alice = reviewer(&tenant, "alice").await;
    // Both at once: the test deploy's review wait is 45 s, and each must still be open.
    let (a, b) = tokio::join!(
        pending_task(&stack, &tenant, &alice),
        pending_task(&stack, &tenant, &alice)
    );
    let listed = json_of(&docket(&alice, &["review", "list", "--status", "pending"]).await);
    let oldest_first: Vec<&str> = listed["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["taskId"].as_str().unwrap())
        .collect();
    let ((_, first), (document, task)) = if oldest_first[0] == a.1 {
        (a, b)
    } else {
        (b, a)
    };
    assert_eq!(oldest_first, [first.as_str(), task.as_str()]);
    let run_id = wait_for_status(&stack, &document, "awaiting_review").await;
    let page = Page::serve(&alice).await;
    let driver = Driver::start().await;
    let browser = driver.browser(1280, 800).await;

    let opened = Instant::now();
    browser.go(&page.url).await;
    let rows = browser.find_n("#queue a.task", 2).await;
    let mut shown = Vec::new();
    for row in &rows {
        shown.push(
            browser
                .attribute(row, "data-task-id")
                .await
                .unwrap_or_default(),
        );
    }
    assert_eq!(
        shown,
        [first.clone(), task.clone()],
        "oldest first, as the API lists them"
    );
    assert_eq!(signed_in_as(&browser).await, "alice");
    std::fs::write(
        screenshot_path("review-queue.png"),
        browser.screenshot().await,
    )
    .unwrap();

    // Open the oldest; `j` goes on to the next task in the queue.
    browser.click(&rows[0]).await;
    browser
        .find(&format!("#task[data-task-id=\"{first}\"]"))
        .await;
    let rendered = ".page[data-page=\"1\"][data-rendered=\"true\"]";
    browser.find(rendered).await;
    println!(
        "review page: the first task rendered with its page {} ms after the page was opened",
        opened.elapsed().as_millis()
    );
    browser.press("j").await;
    browser
        .find(&format!("#task[data-task-id=\"{task}\"]"))
        .await;
    let drawn = browser
        .find(&format!("#task[data-task-id=\"{task}\"] {rendered}"))
        .await;
    assert_no_policy_refusal(&browser).await;
    assert_date_outlined_on(&browser, &drawn).await;
    std::fs::write(
        screenshot_path("review-task.png"),
        browser.screenshot().await,
    )
    .unwrap();

    // Every control is labelled, and the focused one shows it.
    let unlabelled = browser
        .script(
            "return [...document.querySelectorAll('input, textarea, select, button, a[href]')]
               .filter(e => e.offsetParent !== null)
               .filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label')
                            && !e.getAttribute('aria-labelledby') && !e.textContent.trim())
               .map(e => e.outerHTML.slice(0, 80));",
            &[],
        )
        .await;
    assert_eq!(
        unlabelled,
        serde_json::json!([]),
        "controls without a label"
    );
    // A malformed date is refused beside its field, as the API would refuse it, and nothing
    // is decided.
    let date = browser.find("#fields input[name=\"invoice_date\"]").await;
    assert!(
        !browser.value(&date).await.is_empty(),
        "the extracted date is shown"
    );
    // `e` edits the first low-confidence field.
    browser.press("e").await;
    let focus = browser
        .script(
            "const a = document.activeElement, s = getComputedStyle(a);
             return {low: a.matches('#fields .field.low input'), outline: s.outlineStyle,
                     width: s.outlineWidth};",
            &[],
        )
        .await;
    assert_eq!(focus["low"], true, "{focus}");
    assert!(
        focus["outline"] != "none" && focus["width"] != "0px",
        "a visible focus: {focus}"
    );
    browser.clear(&date).await;
    browser.type_into(&date, "04/03/2026").await;
    browser.click(&browser.find("#approve").await).await;
    let refused = browser
        .find(".field-error[data-field=\"invoice_date\"]:not([hidden])")
        .await;
    assert!(browser.text(&refused).await.contains("invoice_date"));
    let shown = json_of(&docket(&alice, &["review", "show", &task]).await);
    assert_eq!(shown["task"]["status"], "pending", "nothing was decided");

    browser.clear(&date).await;
    browser.type_into(&date, "2026-03-04").await;
    assert_eq!(browser.value(&date).await, "2026-03-04");
    browser.click(&browser.find("#approve").await).await;
    let decision = browser.find("#decision").await;
    assert!(browser.text(&decision).await.contains("alice"));
    wait_for_status(&stack, &document, "completed").await;
    assert_eq!(stack.wait_for_execution(&run_id).await, "SUCCEEDED");
    let result = stack
        .json(&format!(
            "s3://{}/{tenant}/{document}/{run_id}/result.json",
            stack.out("DerivedBucket")
        ))
        .await;
    assert_eq!(result["reviewer"], "alice");
    assert_eq!(result["fields"]["invoice_date"]["value"], "2026-03-04");
    let chain = stack.audit(&document).await;
    let approved = chain
        .iter()
        .find(|e| e.draft.action == "review.approved")
        .expect("a review.approved entry");
    assert_eq!(approved.draft.detail["reviewer"], "alice");

    // A narrow window: the document above the fields, nothing wider than the window.
    let narrow = driver.browser(420, 800).await;
    narrow.go(&page.task_url(&task)).await;
    let pages = narrow.find("#pages .page[data-rendered=\"true\"]").await;
    let fields = narrow.find("#fields").await;
    let layout = narrow
        .script(
            "const p = arguments[0].getBoundingClientRect(), f = arguments[1].getBoundingClientRect();
             return {stacked: p.bottom <= f.top + 1,
                     overflow: document.documentElement.scrollWidth - window.innerWidth};",
            &[Browser::arg(&pages), Browser::arg(&fields)],
        )
        .await;
    assert_eq!(layout["stacked"], true, "{layout}");
    assert!(layout["overflow"].as_i64().unwrap() <= 0, "{layout}");
    std::fs::write(
        screenshot_path("review-narrow.png"),
        narrow.screenshot().await,
    )
    .unwrap();
    narrow.quit().await;
    browser.quit().await;
    driver.stop().await;
}

#[tokio::test]
async fn the_second_of_two_reviewers_deciding_one_task_sees_who_decided_it() {
    let stack = Stack::load().await;
    let tenant = tenant();
    let alice = reviewer(&tenant, "alice").await;
    let bob = reviewer(&tenant, "bob").await;
    let (document, task) = pending_task(&stack, &tenant, &alice).await;
    let (alice_page, bob_page) = (Page::serve(&alice).await, Page::serve(&bob).await);
    let driver = Driver::start().await;
    let (a, b) = (
        driver.browser(1280, 800).await,
        driver.browser(1280, 800).await,
    );
    a.go(&alice_page.task_url(&task)).await;
    b.go(&bob_page.task_url(&task)).await;
    a.find("#approve").await;
    b.find("#approve").await;

    // Alice first types a bad date, is refused, puts the extracted one back and approves
    // unchanged: the refusal going away must not move the button from under the click.
    let date = a.find("#fields input[name=\"invoice_date\"]").await;
    let extracted = a.value(&date).await;
    a.clear(&date).await;
    a.type_into(&date, "31/31/2026").await;
    a.click(&a.find("#approve").await).await;
    a.find(".field-error[data-field=\"invoice_date\"]:not([hidden])")
        .await;
    a.clear(&date).await;
    a.type_into(&date, &extracted).await;
    a.click(&a.find("#approve").await).await;
    assert!(a.text(&a.find("#decision").await).await.contains("alice"));
    b.click(&b.find("#approve").await).await;
    let notice = b.find("#notice[data-kind=\"conflict\"]").await;
    let said = b.text(&notice).await;
    assert!(said.contains("alice"), "bob is told who decided: {said:?}");
    wait_for_status(&stack, &document, "completed").await;
    let chain = stack.audit(&document).await;
    let decisions: Vec<_> = chain
        .iter()
        .filter(|e| e.draft.action.starts_with("review.") && e.draft.detail["reviewer"].is_string())
        .map(|e| e.draft.detail["reviewer"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(decisions, ["alice"], "one decision, alice's");
    a.quit().await;
    b.quit().await;
    driver.stop().await;
}

#[tokio::test]
async fn a_reviewer_of_another_tenant_sees_an_empty_queue_and_not_the_task_and_her_own_arrives_unreloaded(
) {
    let stack = Stack::load().await;
    let (tenant_a, tenant_b) = (tenant(), tenant());
    let alice = reviewer(&tenant_a, "alice").await;
    let (_document, task) = pending_task(&stack, &tenant_a, &alice).await;
    let mallory = reviewer(&tenant_b, "mallory").await;
    let page = Page::serve(&mallory).await;
    let driver = Driver::start().await;
    let browser = driver.browser(1280, 800).await;

    browser.go(&page.url).await;
    assert_eq!(signed_in_as(&browser).await, "mallory");
    browser.find("#queue .empty").await;
    assert!(browser.all("#queue a.task").await.is_empty());
    // The same page as alice lists her task: the queue above was empty for mallory alone.
    let alices = Page::serve(&alice).await;
    browser.go(&alices.url).await;
    browser
        .find(&format!("#queue a.task[data-task-id=\"{task}\"]"))
        .await;

    browser.go(&page.task_url(&task)).await;
    let notice = browser.find("#notice[data-kind=\"error\"]").await;
    let said = browser.text(&notice).await.to_lowercase();
    assert!(said.contains("not found"), "{said:?}");
    assert!(browser
        .all(".page[data-rendered=\"true\"]")
        .await
        .is_empty());

    // Back on mallory's queue: a task of her own tenant appears without a reload.
    browser.go(&page.url).await;
    browser.find("#queue .empty").await;
    let (_, hers) = pending_task(&stack, &tenant_b, &mallory).await;
    let row = browser.find_n("#queue a.task", 1).await;
    assert_eq!(browser.attribute(&row[0], "data-task-id").await, Some(hers));
    browser.quit().await;
    driver.stop().await;
}

#[tokio::test]
async fn a_decision_on_a_task_that_expired_while_it_was_open_is_shown_as_expired() {
    let stack = Stack::load().await;
    let tenant = tenant();
    let alice = reviewer(&tenant, "alice").await;
    let (document, task) = pending_task(&stack, &tenant, &alice).await;
    let page = Page::serve(&alice).await;
    let driver = Driver::start().await;
    let browser = driver.browser(1280, 800).await;
    browser.go(&page.task_url(&task)).await;
    let approve = browser.find("#approve").await;

    // The tab stays open past the review wait (45 s in the tests' deploy, scripts/test-local.sh).
    wait_for_status(&stack, &document, "escalated").await;
    assert!(browser.attribute(&approve, "disabled").await.is_none());
    browser.press("a").await;
    let notice = browser.find("#notice[data-kind=\"expired\"]").await;
    let said = browser.text(&notice).await.to_lowercase();
    assert!(said.contains("not recorded"), "{said:?}");
    let shown = json_of(&docket(&alice, &["review", "show", &task]).await);
    assert_eq!(shown["task"]["status"], "expired");
    assert!(shown["task"].get("decision").is_none(), "{shown}");
    browser.quit().await;
    driver.stop().await;
}

#[tokio::test]
async fn a_tiff_documents_pages_are_drawn_with_its_fields_outlined() {
    let stack = Stack::load().await;
    let tenant = tenant();
    let alice = reviewer(&tenant, "alice").await;
    let lines = ambiguous_invoice_lines("INV-2026-0778", "125.00");
    let tiff = render::tiff_of(&invoice_pdf_of_two_pages(&lines));
    assert_eq!(&tiff[..4], b"II*\0", "a little-endian TIFF");
    let (_document, task) = pending_task_of(&stack, &tenant, &alice, "tif", tiff).await;
    let page = Page::serve(&alice).await;
    let driver = Driver::start().await;
    let browser = driver.browser(1280, 800).await;

    browser.go(&page.task_url(&task)).await;
    let drawn = browser
        .find(&format!(
            "#task[data-task-id=\"{task}\"] .page[data-page=\"1\"][data-rendered=\"true\"]"
        ))
        .await;
    assert_no_policy_refusal(&browser).await;
    // Drawn, not merely sized: an undecoded page is all black (an unknown compression) or all
    // white; the invoice's text darkens a few per cent of it.
    let dark = browser
        .script(
            "const c = arguments[0].querySelector('canvas');
             const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
             let dark = 0;
             for (let i = 0; i < d.length; i += 4) if (d[i] < 128) dark++;
             return dark / (d.length / 4);",
            &[Browser::arg(&drawn)],
        )
        .await
        .as_f64()
        .unwrap();
    assert!(
        (0.001..0.2).contains(&dark),
        "the page is drawn: {dark} of it is dark"
    );
    assert_date_outlined_on(&browser, &drawn).await;
    // and its second page (the terms) below it: both image directories are pages
    browser
        .find(".page[data-page=\"2\"][data-rendered=\"true\"]")
        .await;
    assert_eq!(browser.all("#pages .page").await.len(), 2);
    browser.quit().await;
    driver.stop().await;
}
