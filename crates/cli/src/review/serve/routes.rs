//! What the page may ask of `docket review serve`, decided before anything is signed: which
//! requests come from the page itself (not from another site open in the same browser), and
//! which review API route each `/api/…` path is. Only the reviewer's routes are proxied: the
//! server signs with the caller's credentials, so it must not become a signer of anything else
//! (an operator's `POST /reprocesses`, say).

use docket_core::review::TaskId;

/// The most a request body to the page's API may hold (the review API's own limit for a
/// decision is 16 KiB).
pub(super) const MAX_BODY_BYTES: usize = 16 * 1024;

/// A review API route the page may call, with the task it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Route {
    /// `GET /me`: who the API takes the caller for.
    Me,
    /// `GET /tasks`, with the query the page sent (status, limit, nextToken only).
    List(Vec<(&'static str, String)>),
    /// `GET /tasks/{id}`.
    Show(TaskId),
    /// `GET /tasks/{id}/evidence`: where each field was read on its page.
    Evidence(TaskId),
    /// `GET /tasks/{id}/document`: a presigned URL, which this server follows.
    Document(TaskId),
    /// `POST /tasks/{id}/check`: corrections checked as a decision would check them.
    Check(TaskId),
    /// `POST /tasks/{id}/decision`.
    Decide(TaskId),
}

/// The query parameters `GET /tasks` takes; any other is dropped.
const LIST_PARAMETERS: [&str; 3] = ["status", "limit", "nextToken"];

impl Route {
    /// The route of `method` `path` (under `/api/`) with its `query` pairs, or `None`.
    pub(super) fn of(method: &str, path: &str, query: &[(String, String)]) -> Option<Route> {
        let rest = path.strip_prefix("/api/")?;
        let segments: Vec<&str> = rest.split('/').collect();
        let task = |id: &str| TaskId::parse(id).ok();
        match (method, segments.as_slice()) {
            ("GET", ["me"]) => Some(Route::Me),
            ("GET", ["tasks"]) => Some(Route::List(
                query
                    .iter()
                    .filter_map(|(k, v)| {
                        let known = LIST_PARAMETERS.iter().find(|p| **p == k.as_str())?;
                        Some((*known, v.clone()))
                    })
                    .collect(),
            )),
            ("GET", ["tasks", id]) => task(id).map(Route::Show),
            ("GET", ["tasks", id, "evidence"]) => task(id).map(Route::Evidence),
            ("GET", ["tasks", id, "document"]) => task(id).map(Route::Document),
            ("POST", ["tasks", id, "check"]) => task(id).map(Route::Check),
            ("POST", ["tasks", id, "decision"]) => task(id).map(Route::Decide),
            _ => None,
        }
    }

    /// The review API's method and path (under its base URL) for this route.
    pub(super) fn api(&self) -> (&'static str, String) {
        match self {
            Route::Me => ("GET", "me".into()),
            Route::List(_) => ("GET", "tasks".into()),
            Route::Show(id) => ("GET", format!("tasks/{id}")),
            Route::Evidence(id) => ("GET", format!("tasks/{id}/evidence")),
            Route::Document(id) => ("GET", format!("tasks/{id}/document")),
            Route::Check(id) => ("POST", format!("tasks/{id}/check")),
            Route::Decide(id) => ("POST", format!("tasks/{id}/decision")),
        }
    }

    /// The query to send with it.
    pub(super) fn query(&self) -> &[(&'static str, String)] {
        match self {
            Route::List(query) => query,
            _ => &[],
        }
    }
}

/// Why a request is not the page's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Foreign {
    /// `Host` is not this server's loopback name: a DNS-rebinding page, or a proxy.
    Host,
    /// `Origin` is another site's.
    Origin,
    /// `Sec-Fetch-Site` says another site asked.
    Site,
}

impl Foreign {
    pub(super) fn message(self) -> &'static str {
        match self {
            Foreign::Host => "the Host header is not this server's loopback address",
            Foreign::Origin => "the request comes from another origin",
            Foreign::Site => "the request comes from another site",
        }
    }
}

/// Whether a request with these headers comes from the page this server serves on `port`:
/// `Host` must name the loopback server itself (which defeats DNS rebinding); `Origin`, when a
/// browser sends one, must be this server's; `Sec-Fetch-Site`, which browsers send with every
/// request, must be `same-origin` or `none` (typed into the address bar). A program on this
/// machine that sends neither (`curl`) is let through: it could read the credentials anyway.
/// The same rules as Go's `net/http.CrossOriginProtection`.
pub(super) fn from_the_page(
    port: u16,
    host: Option<&str>,
    origin: Option<&str>,
    fetch_site: Option<&str>,
) -> Result<(), Foreign> {
    let local = |authority: &str| {
        ["127.0.0.1", "localhost", "[::1]"]
            .iter()
            .any(|name| authority == format!("{name}:{port}"))
    };
    if !host.is_some_and(local) {
        return Err(Foreign::Host);
    }
    if let Some(origin) = origin {
        let ours = origin.strip_prefix("http://").is_some_and(local);
        if !ours {
            return Err(Foreign::Origin);
        }
    }
    if let Some(site) = fetch_site {
        if !matches!(site, "same-origin" | "none") {
            return Err(Foreign::Site);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "rev-0123456789abcdef0123456789abcdef";

    fn task() -> TaskId {
        TaskId::parse(ID).unwrap()
    }

    #[test]
    fn the_reviewers_routes_map_to_the_review_api() {
        let cases = [
            ("GET", "/api/me".to_string(), Route::Me, "me".to_string()),
            (
                "GET",
                format!("/api/tasks/{ID}"),
                Route::Show(task()),
                format!("tasks/{ID}"),
            ),
            (
                "GET",
                format!("/api/tasks/{ID}/evidence"),
                Route::Evidence(task()),
                format!("tasks/{ID}/evidence"),
            ),
            (
                "GET",
                format!("/api/tasks/{ID}/document"),
                Route::Document(task()),
                format!("tasks/{ID}/document"),
            ),
            (
                "POST",
                format!("/api/tasks/{ID}/check"),
                Route::Check(task()),
                format!("tasks/{ID}/check"),
            ),
            (
                "POST",
                format!("/api/tasks/{ID}/decision"),
                Route::Decide(task()),
                format!("tasks/{ID}/decision"),
            ),
        ];
        for (method, path, route, api_path) in cases {
            let got = Route::of(method, &path, &[]).unwrap();
            assert_eq!(got, route);
            assert_eq!(got.api().0, method);
            assert_eq!(got.api().1, api_path);
        }
    }

    #[test]
    fn the_task_list_passes_on_only_the_parameters_the_api_takes() {
        let query = [
            ("status".to_string(), "pending".to_string()),
            ("tenant".to_string(), "other".to_string()),
            ("nextToken".to_string(), ID.to_string()),
        ];
        let route = Route::of("GET", "/api/tasks", &query).unwrap();
        assert_eq!(
            route.query(),
            [
                ("status", "pending".to_string()),
                ("nextToken", ID.to_string())
            ]
        );
    }

    #[test]
    fn operator_routes_other_methods_and_bad_ids_are_not_proxied() {
        for (method, path) in [
            ("POST", "/api/reprocesses".to_string()),
            ("POST", format!("/api/operations/{ID}/resolution")),
            ("DELETE", format!("/api/tasks/{ID}")),
            ("GET", format!("/api/tasks/{ID}/decision")),
            ("POST", format!("/api/tasks/{ID}")),
            ("GET", "/api/tasks/../operations".to_string()),
            ("GET", "/api/tasks/rev-nothex/evidence".to_string()),
            ("GET", "/tasks".to_string()),
        ] {
            assert_eq!(Route::of(method, &path, &[]), None, "{method} {path}");
        }
    }

    #[test]
    fn the_page_itself_and_local_programs_are_let_through() {
        let same = Some("same-origin");
        for host in ["127.0.0.1:8080", "localhost:8080", "[::1]:8080"] {
            assert_eq!(from_the_page(8080, Some(host), None, same), Ok(()));
        }
        let origin = Some("http://127.0.0.1:8080");
        assert_eq!(
            from_the_page(8080, Some("127.0.0.1:8080"), origin, same),
            Ok(())
        );
        assert_eq!(
            from_the_page(8080, Some("127.0.0.1:8080"), None, Some("none")),
            Ok(())
        );
        // curl: no Origin, no Sec-Fetch-Site.
        assert_eq!(
            from_the_page(8080, Some("127.0.0.1:8080"), None, None),
            Ok(())
        );
    }

    #[test]
    fn another_site_or_a_rebound_name_is_refused() {
        let host = Some("127.0.0.1:8080");
        assert_eq!(
            from_the_page(8080, Some("evil.example:8080"), None, None),
            Err(Foreign::Host)
        );
        assert_eq!(from_the_page(8080, None, None, None), Err(Foreign::Host));
        assert_eq!(
            from_the_page(8080, Some("127.0.0.1:9090"), None, None),
            Err(Foreign::Host)
        );
        assert_eq!(
            from_the_page(8080, host, Some("https://evil.example"), None),
            Err(Foreign::Origin)
        );
        assert_eq!(
            from_the_page(8080, host, Some("http://127.0.0.1:9090"), None),
            Err(Foreign::Origin)
        );
        assert_eq!(
            from_the_page(8080, host, Some("null"), None),
            Err(Foreign::Origin)
        );
        for site in ["cross-site", "same-site"] {
            assert_eq!(
                from_the_page(8080, host, None, Some(site)),
                Err(Foreign::Site)
            );
        }
    }
}
