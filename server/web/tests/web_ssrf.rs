//! `promptforge/web/fetch` with `allow_private_addresses = false`: every special
//! range refused before any connection, in every spelling a URL parser accepts, and
//! redirect targets checked the same way. Where the refused address is this
//! machine's (loopback, 0.0.0.0, mapped and numeric spellings of 127.0.0.1), a
//! server listens there and must see no connection at all. The other ranges are
//! refused before any packet is sent, so nothing leaves the machine.

use promptforge_engine::harness::Tool;
use promptforge_engine::testing::http::{Reply, Server};
use promptforge_web::{AddressPolicy, FetchSettings, FetchTool};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn public_only() -> FetchTool {
    FetchTool::new(FetchSettings::default())
}

async fn refusal(tool: &FetchTool, url: &str) -> String {
    let arguments = json!({ "url": url }).to_string();
    match tool.call(&arguments, &CancellationToken::new()).await {
        Ok(output) => panic!("{url} was fetched: {}", output.text),
        Err(error) => error.message,
    }
}

/// Fetches `http://{host}:{port}/` with the port of a live loopback server and
/// checks the refusal text and that the server saw no connection.
async fn refused_locally(host: &str, want: &str) {
    let server = Server::start(vec![Reply::body(200, "text/plain", "secret")]).await;
    let url = format!("http://{host}:{}/", server.port());
    assert_eq!(refusal(&public_only(), &url).await, want, "{url}");
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    assert_eq!(server.accepted(), 0, "{url} reached the server");
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn loopback_ipv4_is_refused() {
    refused_locally(
        "127.0.0.1",
        "fetch refused: the address 127.0.0.1 is a loopback address (set allow_private_addresses = true under [web] in the Host configuration to reach it)",
    )
    .await;
}

#[tokio::test]
async fn localhost_is_refused_after_resolving_it() {
    let server = Server::start(vec![Reply::body(200, "text/plain", "secret")]).await;
    let url = format!("http://localhost:{}/", server.port());
    let message = refusal(&public_only(), &url).await;
    assert!(
        message == "fetch refused: localhost resolves to 127.0.0.1, a loopback address (set allow_private_addresses = true under [web] in the Host configuration to reach it)"
            || message == "fetch refused: localhost resolves to ::1, a loopback address (set allow_private_addresses = true under [web] in the Host configuration to reach it)",
        "{message}"
    );
    assert_eq!(server.accepted(), 0);
}

#[tokio::test]
async fn loopback_ipv6_is_refused() {
    refused_locally(
        "[::1]",
        "fetch refused: the address ::1 is a loopback address (set allow_private_addresses = true under [web] in the Host configuration to reach it)",
    )
    .await;
}

#[tokio::test]
async fn the_unspecified_address_is_refused() {
    refused_locally(
        "0.0.0.0",
        "fetch refused: the address 0.0.0.0 is the unspecified address (set allow_private_addresses = true under [web] in the Host configuration to reach it)",
    )
    .await;
    refused_locally(
        "[::]",
        "fetch refused: the address :: is the unspecified address (set allow_private_addresses = true under [web] in the Host configuration to reach it)",
    )
    .await;
}

#[tokio::test]
async fn ipv4_mapped_ipv6_loopback_is_refused() {
    refused_locally(
        "[::ffff:127.0.0.1]",
        "fetch refused: the address ::ffff:127.0.0.1 is a loopback address (set allow_private_addresses = true under [web] in the Host configuration to reach it)",
    )
    .await;
    refused_locally(
        "[::ffff:7f00:1]",
        "fetch refused: the address ::ffff:127.0.0.1 is a loopback address (set allow_private_addresses = true under [web] in the Host configuration to reach it)",
    )
    .await;
}

#[tokio::test]
async fn ipv4_compatible_ipv6_is_refused() {
    refused_locally(
        "[::127.0.0.1]",
        "fetch refused: the address ::7f00:1 is a reserved address (set allow_private_addresses = true under [web] in the Host configuration to reach it)",
    )
    .await;
}

#[tokio::test]
async fn decimal_ipv4_literal_is_refused() {
    refused_locally(
        "2130706433",
        "fetch refused: the address 127.0.0.1 is a loopback address (set allow_private_addresses = true under [web] in the Host configuration to reach it)",
    )
    .await;
}

#[tokio::test]
async fn hex_ipv4_literals_are_refused() {
    for host in ["0x7f.1", "0x7f000001", "0x7F.0.0.1"] {
        refused_locally(
            host,
            "fetch refused: the address 127.0.0.1 is a loopback address (set allow_private_addresses = true under [web] in the Host configuration to reach it)",
        )
        .await;
    }
}

#[tokio::test]
async fn octal_and_short_ipv4_literals_are_refused() {
    for host in ["0177.0.0.1", "0177.1", "127.1", "127.0.1"] {
        refused_locally(
            host,
            "fetch refused: the address 127.0.0.1 is a loopback address (set allow_private_addresses = true under [web] in the Host configuration to reach it)",
        )
        .await;
    }
}

async fn refused_remote(url: &str, want: &str) {
    assert_eq!(refusal(&public_only(), url).await, want, "{url}");
}

#[tokio::test]
async fn private_10_is_refused() {
    refused_remote(
        "http://10.0.0.1/",
        "fetch refused: the address 10.0.0.1 is a private address (set allow_private_addresses = true under [web] in the Host configuration to reach it)",
    )
    .await;
}

#[tokio::test]
async fn private_172_16_is_refused() {
    refused_remote(
        "http://172.16.5.4:8080/admin",
        "fetch refused: the address 172.16.5.4 is a private address (set allow_private_addresses = true under [web] in the Host configuration to reach it)",
    )
    .await;
    refused_remote(
        "https://172.31.255.254/",
        "fetch refused: the address 172.31.255.254 is a private address (set allow_private_addresses = true under [web] in the Host configuration to reach it)",
    )
    .await;
}

#[tokio::test]
async fn private_192_168_is_refused() {
    refused_remote(
        "http://192.168.1.1/",
        "fetch refused: the address 192.168.1.1 is a private address (set allow_private_addresses = true under [web] in the Host configuration to reach it)",
    )
    .await;
}

#[tokio::test]
async fn cloud_metadata_link_local_is_refused() {
    refused_remote(
        "http://169.254.169.254/latest/meta-data/",
        "fetch refused: the address 169.254.169.254 is a link-local address (set allow_private_addresses = true under [web] in the Host configuration to reach it)",
    )
    .await;
    refused_remote(
        "http://0xa9fea9fe/",
        "fetch refused: the address 169.254.169.254 is a link-local address (set allow_private_addresses = true under [web] in the Host configuration to reach it)",
    )
    .await;
}

#[tokio::test]
async fn carrier_grade_nat_is_refused() {
    refused_remote(
        "http://100.64.0.1/",
        "fetch refused: the address 100.64.0.1 is a shared (carrier-grade NAT) address (set allow_private_addresses = true under [web] in the Host configuration to reach it)",
    )
    .await;
}

#[tokio::test]
async fn unique_local_ipv6_is_refused() {
    refused_remote(
        "http://[fc00::1]/",
        "fetch refused: the address fc00::1 is a unique-local address (set allow_private_addresses = true under [web] in the Host configuration to reach it)",
    )
    .await;
    refused_remote(
        "http://[fd00:ec2::254]/",
        "fetch refused: the address fd00:ec2::254 is a unique-local address (set allow_private_addresses = true under [web] in the Host configuration to reach it)",
    )
    .await;
}

#[tokio::test]
async fn link_local_ipv6_is_refused() {
    refused_remote(
        "http://[fe80::1]/",
        "fetch refused: the address fe80::1 is a link-local address (set allow_private_addresses = true under [web] in the Host configuration to reach it)",
    )
    .await;
}

#[tokio::test]
async fn multicast_is_refused() {
    refused_remote(
        "http://224.0.0.1/",
        "fetch refused: the address 224.0.0.1 is a multicast address (set allow_private_addresses = true under [web] in the Host configuration to reach it)",
    )
    .await;
    refused_remote(
        "http://[ff02::1]/",
        "fetch refused: the address ff02::1 is a multicast address (set allow_private_addresses = true under [web] in the Host configuration to reach it)",
    )
    .await;
}

#[tokio::test]
async fn broadcast_and_mapped_private_are_refused() {
    refused_remote(
        "http://255.255.255.255/",
        "fetch refused: the address 255.255.255.255 is the broadcast address (set allow_private_addresses = true under [web] in the Host configuration to reach it)",
    )
    .await;
    refused_remote(
        "http://[::ffff:10.0.0.1]/",
        "fetch refused: the address ::ffff:10.0.0.1 is a private address (set allow_private_addresses = true under [web] in the Host configuration to reach it)",
    )
    .await;
    refused_remote(
        "http://[::ffff:169.254.169.254]/",
        "fetch refused: the address ::ffff:169.254.169.254 is a link-local address (set allow_private_addresses = true under [web] in the Host configuration to reach it)",
    )
    .await;
}

/// The first hop's server is allowed by an exact exception; its redirect to another
/// loopback port is checked like the first URL and refused, and that port sees nothing.
#[tokio::test]
async fn a_redirect_target_is_rechecked() {
    let target = Server::start(vec![Reply::body(200, "text/plain", "secret")]).await;
    let first = Server::start(vec![Reply::redirect(
        302,
        &format!("http://127.0.0.1:{}/inner", target.port()),
    )])
    .await;
    let tool = FetchTool::new(FetchSettings {
        policy: AddressPolicy::public_only().with_exception(first.addr()),
        ..FetchSettings::default()
    });
    assert_eq!(
        refusal(&tool, &first.url()).await,
        "fetch refused: after a redirect, the address 127.0.0.1 is a loopback address (set allow_private_addresses = true under [web] in the Host configuration to reach it)"
    );
    assert_eq!(first.requests().len(), 1);
    assert_eq!(target.accepted(), 0);
}

#[tokio::test]
async fn a_redirect_to_a_name_is_resolved_and_rechecked() {
    let target = Server::start(vec![Reply::body(200, "text/plain", "secret")]).await;
    let first = Server::start(vec![Reply::redirect(
        301,
        &format!("http://localhost:{}/", target.port()),
    )])
    .await;
    let tool = FetchTool::new(FetchSettings {
        policy: AddressPolicy::public_only().with_exception(first.addr()),
        ..FetchSettings::default()
    });
    let message = refusal(&tool, &first.url()).await;
    assert!(
        message.starts_with("fetch refused: after a redirect, localhost resolves to "),
        "{message}"
    );
    assert_eq!(target.accepted(), 0);
}

#[tokio::test]
async fn a_redirect_to_a_metadata_address_is_refused() {
    let first = Server::start(vec![Reply::redirect(
        307,
        "http://169.254.169.254/latest/meta-data/",
    )])
    .await;
    let tool = FetchTool::new(FetchSettings {
        policy: AddressPolicy::public_only().with_exception(first.addr()),
        ..FetchSettings::default()
    });
    assert_eq!(
        refusal(&tool, &first.url()).await,
        "fetch refused: after a redirect, the address 169.254.169.254 is a link-local address (set allow_private_addresses = true under [web] in the Host configuration to reach it)"
    );
}

#[tokio::test]
async fn the_exception_covers_only_its_exact_port() {
    let allowed = Server::start(vec![Reply::body(200, "text/plain", "hello")]).await;
    let tool = FetchTool::new(FetchSettings {
        policy: AddressPolicy::public_only().with_exception(allowed.addr()),
        ..FetchSettings::default()
    });
    let arguments = json!({ "url": allowed.url() }).to_string();
    let output = tool
        .call(&arguments, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(output.text, "hello");
}
