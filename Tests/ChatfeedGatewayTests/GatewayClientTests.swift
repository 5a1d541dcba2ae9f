import ChatModel
import ChatfeedClient
import ChatfeedEngine
import ChatfeedGateway
import Foundation
import JSONCodec
import Testing
import TestSupport

extension GatewaySuites {
    /// `ChatClient` over `WebSocketTransport`, and the gateway's plain HTTP endpoints.
    @Suite struct GatewayClientTests {
        /// An upgrade takes several turns of the cooperative pool (the client's tasks, the
        /// gateway's admission task), and a whole test run keeps the pool's two threads busy for
        /// seconds a turn, while the timer of the default 10 s needs only two: once in CI every
        /// reconnect attempt after a restart timed out so. The harness's reads allow 60 s.
        static let handshakeTimeout: Duration = .seconds(60)

        @Test(.hangGuard) func aClientMirrorsItsListOverWebSocketAndResumesAfterARestart() async throws {
            // A deadline of its own: a mirror that never matches, or a restart that never ends,
            // fails here instead of holding the run (`.hangGuard` cannot end these waits).
            try await withDeadline(.seconds(300), "mirroring a list over WebSocket across a restart") {
                let harness = try await GatewayHarness()
                let transport = WebSocketTransport(
                    url: harness.url, token: try await harness.token("me"), handshakeTimeout: Self.handshakeTimeout)
                let client = try await ChatClient(transport: transport)
                let writer = try await harness.connect("me")
                for index in 0..<30 {
                    _ = try await writer.result("chat.create", ["chat": .string("c\(index)"), "title": "T", "createdAt": .integer(index)])
                }
                let subscription = try await client.subscribe(SubscriptionOptions(limit: 20))
                var updates = subscription.makeAsyncIterator()
                var mirror = try #require(try await updates.next()).chats
                #expect(mirror.map(\.id) == (10..<30).reversed().map { "c\($0)" })

                // Writes through another session arrive as batches.
                var random = SeededGenerator(seed: 20)
                for step in 0..<40 {
                    let number = Int.random(in: 0..<35, using: &random)
                    let chat = "c\(number)"
                    if number >= 30 {
                        _ = try await writer.call("chat.create", ["chat": .string(chat), "title": "N", "createdAt": .integer(100 + step)])
                    } else {
                        _ = try await writer.result("message.post", [
                            "chat": .string(chat), "id": .string("m\(step)"), "sender": "me", "text": "hi", "sentAt": .integer(1000 + step),
                        ])
                    }
                }
                _ = try await writer.result("server.version")
                var expected = try await client.listChats(limit: 20).items
                while mirror != expected {
                    mirror = try #require(try await updates.next()).chats
                }

                // A restart of the gateway (1012): the client reconnects and resumes with batches.
                try await harness.restartGateway()
                let writer2 = try await harness.connect("me")
                _ = try await writer2.result("message.post", ["chat": "c0", "id": "after", "sender": "me", "text": "back", "sentAt": 5000])
                expected = try await client.listChats(limit: 20).items
                #expect(expected.first?.id == "c0")
                var reloads = 0
                while mirror != expected {
                    let update = try #require(try await updates.next())
                    if update.isReload { reloads += 1 }
                    mirror = update.chats
                }
                #expect(reloads == 0)
                await client.close()
                try await harness.stop()
            }
        }

        @Test func aRefusedTokenIsAClearErrorOfTheTransport() async throws {
            let harness = try await GatewayHarness()
            let transport = WebSocketTransport(url: harness.url, token: "not-a-token")
            await #expect(throws: ChatfeedClientError.self) { _ = try await transport.connect() }
            try await harness.stop()
        }

        /// swift-websocket's client waits for the upgrade's answer past the server's FIN; the
        /// transport bounds the handshake, so that a reconnect goes on to its next attempt.
        @Test(.hangGuard) func aGatewayThatClosesDuringTheHandshakeIsAFailedAttempt() async throws {
            let port = try RawHTTP.closeWithoutAnswering()
            let transport = WebSocketTransport(url: "ws://127.0.0.1:\(port)/v1/feed", token: "t", handshakeTimeout: .milliseconds(500))
            let started = ContinuousClock.now
            await #expect {
                _ = try await transport.connect()
            } throws: { error in
                guard case ChatfeedClientError.cannotStart(let reason) = error else { return false }
                return reason.contains("did not answer the WebSocket upgrade")
            }
            #expect(ContinuousClock.now - started < .seconds(60))
        }

        @Test func healthMetricsDevTokensAndTheWebClientsFiles() async throws {
            let directory = try TemporaryDirectory()
            let web = directory.url.appendingPathComponent("Web")
            try FileManager.default.createDirectory(at: web.appendingPathComponent("lib"), withIntermediateDirectories: true)
            try Data("<!doctype html><title>chatfeed</title>".utf8).write(to: web.appendingPathComponent("index.html"))
            try Data("export const x = 1;".utf8).write(to: web.appendingPathComponent("lib/chatfeed.js"))
            try Data("body{}".utf8).write(to: web.appendingPathComponent("style.css"))
            try Data("secret".utf8).write(to: directory.url.appendingPathComponent("outside.txt"))
            let harness = try await GatewayHarness {
                $0.webRoot = web.path
                $0.devTokens = true
            }
            let port = harness.port
            #expect(try await RawHTTP.get(port: port, "/healthz").status == 200)

            let index = try await RawHTTP.get(port: port, "/")
            #expect(index.status == 200 && index.headers["content-type"]?.hasPrefix("text/html") == true)
            #expect(index.body.contains("chatfeed"))
            let script = try await RawHTTP.get(port: port, "/lib/chatfeed.js")
            #expect(script.status == 200 && script.headers["content-type"]?.hasPrefix("text/javascript") == true)
            #expect(try await RawHTTP.get(port: port, "/style.css").headers["content-type"]?.hasPrefix("text/css") == true)
            for escape in ["/../outside.txt", "/%2e%2e/outside.txt", "/lib/../../outside.txt", "/missing.js"] {
                let response = try await RawHTTP.get(port: port, escape)
                #expect(response.status == 404, "\(escape)")
                #expect(!response.body.contains("secret"))
            }

            // A development token signs in.
            let minted = try await RawHTTP.get(port: port, "/dev/token?user=me")
            #expect(minted.status == 200)
            let body = try JSONValue(parsing: Array(minted.body.utf8))
            let token = try #require(body["token"]?.stringValue)
            #expect((body["expiresAt"]?.int64Value ?? 0) > Int64(Date().timeIntervalSince1970 * 1000))
            let socket = try await TestSocket.connect(url: harness.url, token: token, logger: harness.logger)
            _ = try await socket.result("server.version")
            #expect(try await RawHTTP.get(port: port, "/dev/token?user=ghost").status == 404)

            _ = try await socket.result("feed.subscribe", ["limit": 5])
            _ = try await socket.result("chat.create", ["chat": "a", "title": "A", "createdAt": 1])
            _ = try await socket.nextNotification()  // its batch
            _ = try await socket.call("messages.list", ["chat": "nowhere"])
            _ = try await socket.call("no.such.method")
            _ = try await RawHTTP.get(port: port, "/v1/feed", upgrade: true)
            let metrics = try await RawHTTP.get(port: port, "/metrics")
            #expect(metrics.status == 200)
            for line in [
                "chatfeed_gateway_connections 1", "chatfeed_gateway_subscriptions 1", "chatfeed_engine_sessions 1",
                #"chatfeed_gateway_requests_total{method="server.version"} 1"#,
                #"chatfeed_gateway_requests_total{method="unknown"} 1"#,
                #"chatfeed_gateway_errors_total{method="messages.list",code="-32001"} 1"#,
                #"chatfeed_gateway_errors_total{method="unknown",code="-32601"} 1"#,
                #"chatfeed_gateway_upgrades_refused_total{status="401"} 1"#,
                "chatfeed_group_commit_seconds_count", "chatfeed_group_commit_writes_bucket",
                "chatfeed_commit_to_send_seconds_count 1", "chatfeed_gateway_batches_sent_total 1",
            ] {
                #expect(metrics.body.contains(line), "\(line) in \(metrics.body)")
            }
            try await harness.stop()

            // Off by default.
            let plain = try await GatewayHarness()
            #expect(try await RawHTTP.get(port: plain.port, "/dev/token?user=me").status == 404)
            try await plain.stop()
        }
    }

    /// Many WebSocket sessions of several users at once: each one's mirror follows its own user's
    /// list through random writes, and ends equal to `chats.list`.
    @Suite struct GatewayFanOutTests {
        @Test(.hangGuard, arguments: [7, 41]) func everySessionsMirrorEqualsItsUsersList(seed: UInt64) async throws {
            let users = ["ann", "bob", "cat", "dan"]
            let harness = try await GatewayHarness(users: users)
            var random = SeededGenerator(seed: seed)
            var sessions: [(user: String, client: ChatClient, updates: FeedSubscription.AsyncIterator)] = []
            // Chats of random members, written by a member of each.
            var members: [String: [String]] = [:]
            let writers = try await Dictionary(uniqueKeysWithValues: users.asyncMap { ($0, try await harness.connect($0)) })
            for index in 0..<24 {
                let chosen = users.filter { _ in Bool.random(using: &random) }
                let creator = chosen.first ?? users[index % users.count]
                let chat = "g\(index)"
                _ = try await writers[creator]!.result("chat.create", [
                    "chat": .string(chat), "title": .string("G\(index)"), "createdAt": .integer(index),
                    "members": .array(Set(chosen + [creator]).sorted().map { .string($0) }),
                ])
                members[chat] = Set(chosen + [creator]).sorted()
            }
            for user in users {
                for _ in 0..<2 {
                    let client = try await ChatClient(transport: WebSocketTransport(
                        url: harness.url, token: try await harness.token(user), handshakeTimeout: GatewayClientTests.handshakeTimeout))
                    let subscription = try await client.subscribe(SubscriptionOptions(limit: 8, maxInFlight: 2))
                    sessions.append((user, client, subscription.makeAsyncIterator()))
                }
            }
            var mirrors = [[Chat]](repeating: [], count: sessions.count)
            for index in sessions.indices { mirrors[index] = try #require(try await sessions[index].updates.next()).chats }
            // Random posts, renames and reads by members.
            for step in 0..<120 {
                let chat = "g\(Int.random(in: 0..<24, using: &random))"
                let author = members[chat]!.randomElement(using: &random)!
                switch Int.random(in: 0..<10, using: &random) {
                case 0: _ = try await writers[author]!.result("chat.rename", ["chat": .string(chat), "title": .string("R\(step)")])
                case 1: _ = try await writers[author]!.result("chat.markRead", ["chat": .string(chat)])
                default:
                    _ = try await writers[author]!.result("message.post", [
                        "chat": .string(chat), "id": .string("m\(step)"), "text": "hi", "sentAt": .integer(1000 + step),
                    ])
                }
            }
            for index in sessions.indices {
                let expected = try await sessions[index].client.listChats(limit: 8).items
                while mirrors[index] != expected {
                    mirrors[index] = try #require(try await sessions[index].updates.next()).chats
                }
                #expect(mirrors[index].allSatisfy { members[$0.id]!.contains(sessions[index].user) })
            }
            for session in sessions { await session.client.close() }
            try await harness.stop()
        }
    }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
