import ChatfeedEngine
import ChatfeedGateway
import Foundation
import JSONCodec
import JWTKit
import NIOCore
import NIOWebSocket
import Testing
import TestSupport

extension GatewaySuites {
    /// The gateway over loopback (docs/PROTOCOL.md, The gateway): token checks before the upgrade,
    /// one JSON-RPC message per text frame, close codes, flow control, limits and shutdown.
    @Suite struct GatewayTests {
        // MARK: Tokens

        @Test func anUpgradeWithoutAValidTokenIs401WithAOneLineReason() async throws {
            let harness = try await GatewayHarness(users: ["ann"])
            let valid = try await harness.token("ann")
            let otherSecret = await GatewayTokens(secret: Array("another secret, just as long as the first".utf8))
            let forged = try await otherSecret.mint(user: "ann", expiresAt: Date().addingTimeInterval(3600))
            let expired = try await harness.token("ann", ttl: -120)
            let ghost = try await harness.token("ghost")
            let payload = valid.split(separator: ".")[1]
            let none = Self.base64URL(#"{"alg":"none","typ":"JWT"}"#) + "." + payload + "."
            let hs512 = Self.base64URL(#"{"alg":"HS512","typ":"JWT"}"#) + "." + payload + "." + valid.split(separator: ".")[2]
            let noExpiry = try await Self.withoutExpiry(user: "ann", secret: GatewayHarness.secret)
            let cases: [(headers: [String: String], query: String, reason: String)] = [
                ([:], "", "missing token"),
                (["Authorization": "Basic YW5uOnB3"], "", "malformed Authorization header"),
                (["Authorization": "Bearer not-a-jwt"], "", "malformed token"),
                (["Authorization": "Bearer \(forged)"], "", "bad token signature"),
                (["Authorization": "Bearer \(expired)"], "", "token expired"),
                (["Authorization": "Bearer \(ghost)"], "", "'ghost' does not exist"),
                (["Authorization": "Bearer \(none)"], "", "alg must be HS256"),
                (["Authorization": "Bearer \(hs512)"], "", "alg must be HS256"),
                (["Authorization": "Bearer \(noExpiry)"], "", "malformed token"),
                ([:], "?access_token=\(forged)", "bad token signature"),
            ]
            for (headers, query, reason) in cases {
                let response = try await RawHTTP.get(port: harness.port, "/v1/feed" + query, headers: headers, upgrade: true)
                #expect(response.status == 401, "\(reason): \(response)")
                #expect(response.body.contains(reason), "\(reason): \(response.body)")
                #expect(response.body.hasSuffix("\n") && response.body.dropLast().split(separator: "\n").count == 1)
                #expect(response.headers["upgrade"] == nil)
            }
            // A valid token upgrades, in the header or (for browsers) in the query.
            let upgraded = try await RawHTTP.get(port: harness.port, "/v1/feed?access_token=\(valid)", upgrade: true)
            #expect(upgraded.status == 101)
            let socket = try await harness.connect("ann")
            #expect(try await socket.result("server.version")["protocol"] != nil)
            try await harness.stop()
        }

        static func base64URL(_ text: String) -> String {
            Data(text.utf8).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }

        /// A correctly signed HS256 token with a `sub` and no `exp`.
        static func withoutExpiry(user: String, secret: [UInt8]) async throws -> String {
            struct SubjectOnly: JWTPayload {
                var sub: SubjectClaim
                func verify(using algorithm: some JWTAlgorithm) async throws {}
            }
            let keys = JWTKeyCollection()
            await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
            return try await keys.sign(SubjectOnly(sub: SubjectClaim(value: user)))
        }

        // MARK: Messages

        @Test func eachTextFrameIsOneRequestAndABadOneKeepsTheConnection() async throws {
            let harness = try await GatewayHarness()
            let socket = try await harness.connect("me")
            _ = try await socket.result("chat.create", ["chat": "a", "title": "A", "createdAt": 1])
            // A message spread over lines (JSON whitespace) is one request.
            socket.send("{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 77,\r\n  \"method\": \"chats.list\"\n}")
            let listed = try await socket.response(to: 77)
            #expect(listed["result"]?["total"] == .integer(1))
            // Bad JSON: its error, and the connection stays.
            socket.send("{\"jsonrpc\": \"2.0\", \"id\": 78, ")
            let bad = try #require(try await socket.next())
            #expect(bad["error"]?["code"] == .integer(-32700))
            socket.send("[1, 2]")
            #expect(try await socket.next()?["error"]?["code"] == .integer(-32600))
            #expect(try await socket.result("chats.list")["items"]?.arrayValue?.count == 1)
            try await harness.stop()
        }

        @Test func aBinaryFrameCloses1003AndATooLongOne1009() async throws {
            let harness = try await GatewayHarness(maxLineBytes: 4096)
            let binary = try await harness.connect("me")
            _ = try await binary.result("server.version")
            binary.sendBinary([1, 2, 3])
            #expect(try await binary.next() == nil)
            #expect(try await binary.closeFrame()?.closeCode == .unacceptableData)

            let long = try await harness.connect("me")
            long.send(TestSocket.request(id: 1, "chats.list", ["list": .string(String(repeating: "x", count: 8000))]))
            #expect(try await long.next() == nil)
            #expect(try await long.closeFrame()?.closeCode == .messageTooLarge)
            // Others go on.
            let other = try await harness.connect("me")
            _ = try await other.result("server.version")
            try await harness.stop()
        }

        /// A text message in fragments (continuation frames, a ping between them) is one request;
        /// fragments over `maxLineBytes` in all (each under it) close with 1009, a continuation
        /// that continues nothing with 1002, a text message that is not UTF-8 with 1007.
        @Test func aFragmentedTextMessageIsOneRequest() async throws {
            let harness = try await GatewayHarness(maxLineBytes: 4096)
            let socket = try await harness.connect("me")
            let request = Array(TestSocket.request(id: 5, "server.version").utf8)
            socket.sendFrames([
                WebSocketFrame(fin: false, opcode: .text, data: ByteBuffer(bytes: request[0..<10])),
                WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer(string: "between")),
                WebSocketFrame(fin: false, opcode: .continuation, data: ByteBuffer(bytes: request[10..<20])),
                WebSocketFrame(fin: true, opcode: .continuation, data: ByteBuffer(bytes: request[20...])),
            ])
            #expect(try await socket.response(to: 5)["result"]?["protocol"] != nil)
            _ = try await socket.result("server.version")

            let long = try await harness.connect("me")
            _ = try await long.result("server.version")
            let spaces = ByteBuffer(repeating: 0x20, count: 3000)
            long.sendFrames([
                WebSocketFrame(fin: false, opcode: .text, data: ByteBuffer(string: "{")),
                WebSocketFrame(fin: false, opcode: .continuation, data: spaces),
                WebSocketFrame(fin: true, opcode: .continuation, data: spaces),
            ])
            #expect(try await long.next() == nil)
            #expect(try await long.closeFrame()?.closeCode == .messageTooLarge)

            let stray = try await harness.connect("me")
            _ = try await stray.result("server.version")
            stray.sendFrames([WebSocketFrame(fin: true, opcode: .continuation, data: ByteBuffer(string: "{}"))])
            #expect(try await stray.next() == nil)
            #expect(try await stray.closeFrame()?.closeCode == .protocolError)

            let invalid = try await harness.connect("me")
            _ = try await invalid.result("server.version")
            invalid.sendFrames([WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(bytes: [0x22, 0xFF, 0xFE, 0x22]))])
            #expect(try await invalid.next() == nil)
            #expect(try await invalid.closeFrame()?.closeCode == .dataInconsistentWithMessage)
            // Others go on.
            _ = try await socket.result("server.version")
            try await harness.stop()
        }

        // MARK: Limits and shutdown

        @Test func oneConnectionBeyondMaxConnectionsIs503() async throws {
            let harness = try await GatewayHarness { $0.maxConnections = 2 }
            let first = try await harness.connect("me")
            let second = try await harness.connect("me")
            _ = try await first.result("server.version")
            _ = try await second.result("server.version")
            let token = try await harness.token("me")
            let refused = try await RawHTTP.get(port: harness.port, "/v1/feed", headers: ["Authorization": "Bearer \(token)"], upgrade: true)
            #expect(refused.status == 503)
            #expect(refused.body.contains("maxConnections 2"))
            // A closed connection frees its slot.
            first.finishSending()
            second.finishSending()
            try await harness.stop()
        }

        /// A client gone while its upgrade is decided gives its connection slot back: 30 such
        /// clients against `maxConnections` 1 leave room for the next one (a slot taken by an
        /// admission whose 101 could not be written was never given back: 503 for good).
        @Test func anUpgradeAbandonedByItsClientGivesItsSlotBack() async throws {
            let harness = try await GatewayHarness { $0.maxConnections = 1 }
            let token = try await harness.token("me")
            for _ in 0..<30 {
                RawHTTP.abortUpgrade(port: harness.port, "/v1/feed", headers: ["Authorization": "Bearer \(token)"])
            }
            var served = false
            var statuses: [Int] = []
            let deadline = ContinuousClock.now + .seconds(60)
            while !served, ContinuousClock.now < deadline {
                let answer = try await RawHTTP.get(port: harness.port, "/v1/feed", headers: ["Authorization": "Bearer \(token)"], upgrade: true)
                served = answer.status == 101
                statuses.append(answer.status)
                if !served { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(served, "every slot stayed taken after 30 abandoned upgrades: \(statuses.suffix(3))")
            try await harness.stop()
        }

        /// A gateway session has its token's user's rights (docs/PROTOCOL.md, Users and
        /// sessions), over a real socket: acting as another user and the methods for trusted
        /// sessions are −32007 naming the right, a chat it is not in is −32001 for it, and a
        /// refusal changes nothing.
        @Test func aSessionHasItsTokensUsersRightsOnly() async throws {
            let harness = try await GatewayHarness(users: ["ann"])
            let me = try await harness.connect("me")
            let ann = try await harness.connect("ann")
            _ = try await ann.result("chat.create", ["chat": "hers", "title": "Hers", "createdAt": 1])
            let refusals: [(String, JSONObject, Int)] = [
                ("chats.list", ["user": "ann"], -32007),
                ("message.post", ["chat": "hers", "id": "x1", "text": "hi", "sentAt": 2, "user": "ann"], -32007),
                ("user.create", ["user": "eve"], -32007),
                ("user.remove", ["user": "ann"], -32007),
                ("chat.remove", ["chat": "hers"], -32007),
                ("server.stats", [:], -32007),
                ("message.post", ["chat": "hers", "id": "x2", "text": "hi", "sentAt": 3], -32001),
                ("chat.rename", ["chat": "hers", "title": "Mine now"], -32001),
                ("messages.list", ["chat": "hers"], -32001),
            ]
            for (method, params, code) in refusals {
                let answer = try await me.call(method, params)
                #expect(answer["error"]?["code"] == .integer(Int64(code)), "\(method) \(params): \(answer)")
                if code == -32007 { #expect(answer["error"]?["data"]?["right"] != nil, "\(method): \(answer)") }
            }
            // Nothing changed: ann's chat, title and messages are as they were, and eve does not exist.
            let hers = try await ann.result("chats.list")
            #expect(hers["items"]?.arrayValue?.first?["title"] == "Hers")
            #expect(hers["items"]?.arrayValue?.first?["lastMessage"] == .null)
            #expect(try await ann.result("messages.list", ["chat": "hers"])["items"]?.arrayValue?.isEmpty == true)
            #expect(try await me.result("chats.list")["total"] == .integer(0))
            #expect(try await harness.engine.user("eve") == nil)
            try await harness.stop()
        }

        /// A client that shuts its side of the connection (FIN) without a close frame is closed
        /// at once and gives its slot back (it stayed half-open until a ping failed, 30 s).
        @Test func aClientThatHalfClosesWithoutACloseFrameIsClosedAndGivesItsSlotBack() async throws {
            let harness = try await GatewayHarness { $0.maxConnections = 1 }
            let token = try await harness.token("me")
            let headers = ["Authorization": "Bearer \(token)"]
            let closed = try await RawHTTP.halfCloseAfterUpgrade(port: harness.port, "/v1/feed", headers: headers, seconds: 10)
            #expect(closed, "the gateway kept a half-closed WebSocket open for 10 s")
            var status = 0
            let deadline = ContinuousClock.now + .seconds(10)
            while status != 101, ContinuousClock.now < deadline {
                status = try await RawHTTP.get(port: harness.port, "/v1/feed", headers: headers, upgrade: true).status
                if status != 101 { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(status == 101, "the half-closed connection kept the only slot")
            try await harness.stop()
        }

        /// A client that stops reading while the gateway has far more to send than the sockets
        /// hold: the shutdown cuts it after the grace and closes its socket, and ends.
        @Test(.hangGuard) func aShutdownEndsWhileAClientNeverReadsItsLines() async throws {
            let harness = try await GatewayHarness { $0.shutdownGraceSeconds = 1 }
            _ = try await Self.stalledReader(of: harness, lists: 600)
            try await Task.sleep(for: .milliseconds(500))
            let started = ContinuousClock.now
            try await harness.stop()
            #expect(ContinuousClock.now - started < .seconds(30))
        }

        @Test func aGracefulShutdownSendsThePendingLinesAndCloses1012() async throws {
            let harness = try await GatewayHarness()
            let sockets = try await [harness.connect("me"), harness.connect("me"), harness.connect("me")]
            for socket in sockets { _ = try await socket.result("feed.subscribe", ["limit": 10, "maxInFlight": 10]) }
            for (index, socket) in sockets.enumerated() {
                _ = try await socket.result("chat.create", ["chat": .string("c\(index)"), "title": "T", "createdAt": .integer(index)])
            }
            let stopping = Task { try await harness.stop() }
            for socket in sockets {
                // Every batch of the three creates reaches every subscriber before the close.
                while let message = try await socket.next() { socket.keep(message) }
                #expect(socket.notifications.filter { $0["method"] == .string("feed.batch") }.count == 3)
                let close = try await socket.closeFrame()
                #expect(close?.closeCode == WebSocketErrorCode(codeNumber: 1012))
                #expect(close?.reason?.isEmpty == false)
            }
            try await stopping.value
            // Every write was committed.
            let engine = try ChatEngine(options: EngineOptions(databasePath: harness.directory.path("gateway.sqlite")))
            let session = engine.openInProcessSession()
            session.send(Array(TestSocket.request(id: 1, "chats.list").utf8) + [0x0A])
            var lines = session.lines.makeAsyncIterator()
            let listed = try JSONValue(parsing: try #require(await lines.next()))
            #expect(listed["result"]?["total"] == .integer(3))
            engine.stop()
            await offPool { engine.waitUntilStopped() }
        }

        // MARK: Flow control

        /// 100 chats with long titles, made by a session of `me`; then another session of `me`
        /// that stops reading its socket and asks for `lists` lists of all 100 (ids 1001…),
        /// about 30 KB each.
        static func stalledReader(of harness: GatewayHarness, lists: Int) async throws -> TestSocket {
            let writer = try await harness.connect("me")
            for index in 0..<100 {
                _ = try await writer.result("chat.create", ["chat": .string("c\(index)"), "title": .string(String(repeating: "t", count: 250)), "createdAt": .integer(index)])
            }
            let slow = try await harness.connect("me")
            _ = try await slow.result("server.version")
            slow.stopReading()
            for id in 1...lists { slow.send(TestSocket.request(id: 1000 + id, "chats.list", ["limit": 100])) }
            return slow
        }

        @Test func aReaderThatStopsReadingNeverDelaysAnotherSession() async throws {
            let harness = try await GatewayHarness(sessionOutputLimitBytes: 64 << 10)
            // Far more than the socket buffers and the 64 KiB bound hold.
            let requests = 600
            let slow = try await Self.stalledReader(of: harness, lists: requests)
            try await Task.sleep(for: .milliseconds(500))
            // Another session is answered at once, and sees writes.
            let fast = try await harness.connect("me")
            for index in 0..<20 {
                _ = try await fast.result("chat.rename", ["chat": "c0", "title": .string("renamed \(index)")])
                _ = try await fast.result("chats.list", ["limit": 5])
            }
            // The slow reader reads on: nothing was lost, nothing was cut.
            slow.resumeReading()
            for id in 1...requests {
                let response = try await slow.response(to: 1000 + id)
                #expect(response["result"]?["items"]?.arrayValue?.count == 100)
            }
            _ = try await slow.result("server.version")
            try await harness.stop()
        }

        /// A client that goes on sending while its session is held (its output over the bound,
        /// the client not reading): past what the engine queues for the session (256 KiB) the
        /// gateway leaves the rest in the socket; once the client reads again, every request is
        /// answered, in order, and another session was served all along.
        @Test func aClientThatSendsWhileItsSessionIsHeldIsAnsweredInOrder() async throws {
            let harness = try await GatewayHarness(sessionOutputLimitBytes: 16 << 10)
            // 9 MB of answers: more than the sockets' buffers hold, so the output passes its
            // 16 KiB bound, and the session is held.
            let lists = 300
            let slow = try await Self.stalledReader(of: harness, lists: lists)
            // Then 2 MB of small requests (padded with JSON whitespace): eight times what the
            // engine queues for a session.
            let padding = String(repeating: " ", count: 2000)
            let versions = 1000
            for id in 1...versions { slow.send("{" + padding + TestSocket.request(id: 10_000 + id, "server.version").dropFirst()) }
            try await Task.sleep(for: .milliseconds(500))
            let fast = try await harness.connect("me")
            for index in 0..<10 {
                _ = try await fast.result("chat.rename", ["chat": "c0", "title": .string("renamed \(index)")])
            }
            slow.resumeReading()
            var expected = Array(1001...(1000 + lists)) + Array(10_001...(10_000 + versions))
            expected.append(99)
            slow.send(TestSocket.request(id: 99, "server.version"))
            var answered: [Int] = []
            while answered.count < expected.count, let message = try await slow.next() {
                guard let id = message["id"]?.numberValue?.int64Value else { continue }
                #expect(message["result"] != nil, "\(message)")
                answered.append(Int(id))
            }
            #expect(answered == expected)
            try await harness.stop()
        }
    }
}
