import ChatfeedGateway
import Foundation
import JSONCodec
import Logging
import NIOWebSocket
import Testing
import TestSupport

extension GatewaySuites {
    /// `chatfeedd --listen` as a process: a service that outlives its stdin, refuses to start without
    /// a secret, and on SIGTERM closes its WebSockets with 1012, commits and exits 0.
    @Suite struct ListeningDaemonTests {
        @Test func withoutASecretTheDaemonRefusesToStartWithOneLine() throws {
            let directory = try TemporaryDirectory()
            let outcome = try BuiltExecutable.run("chatfeedd", [
                "--database", directory.path("d.sqlite"), "--listen", "127.0.0.1:0",
            ], stdin: "", timeout: 30)
            #expect(outcome.status == 1)
            #expect(outcome.stderr.contains("tokenSecretFile"))
            #expect(outcome.stderr.split(separator: "\n").count == 1)
        }

        /// `chatfeed token` mints a token that the gateway accepts for its user (`sub`), and
        /// `chatfeed watch --url --token` shows that user's list from the gateway.
        @Test(.hangGuard) func theCLIMintsATokenAndWatchesAGateway() async throws {
            let harness = try await GatewayHarness()
            let secretFile = harness.directory.path("token.secret")
            try Data(GatewayHarness.secret).write(to: URL(fileURLWithPath: secretFile))
            let minted = try await BuiltExecutable.run("chatfeed", ["token", "--user", "me", "--ttl", "10m", "--secret-file", secretFile])
            #expect(minted.status == 0, "\(minted.stderr)")
            let token = minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(try await harness.tokens.verify(token) == "me")
            let socket = try await TestSocket.connect(url: harness.url, token: token, logger: harness.logger)
            _ = try await socket.result("chat.create", ["chat": "hello", "title": "Hello from the gateway", "createdAt": 1])
            let badTTL = try await BuiltExecutable.run("chatfeed", ["token", "--user", "me", "--ttl", "soon", "--secret-file", secretFile])
            #expect(badTTL.status == 1 && badTTL.stderr.contains("--ttl 'soon'"), "\(badTTL.stderr)")

            let watched = try await BuiltExecutable.run("chatfeed", ["watch", "--url", harness.url, "--token", token, "--duration", "2"])
            #expect(watched.status == 0, "\(watched.stderr)")
            #expect(watched.stdout.contains("Hello from the gateway"), "\(watched.stdout.suffix(2_000))")
            try await harness.stop()
        }

        @Test(.hangGuard) func aListeningDaemonOutlivesStdinAndStopsOnSIGTERMWith1012() async throws {
            let directory = try TemporaryDirectory()
            let secret = String(repeating: "k", count: 40)
            try Data(secret.utf8).write(to: directory.url.appendingPathComponent("token.secret"))
            let config = directory.path("chatfeed.json")
            try Data(#"{"tokenSecretFile": "\#(directory.path("token.secret"))"}"#.utf8).write(to: URL(fileURLWithPath: config))
            let stderr = directory.path("stderr")
            let child = try ChildProcess(
                executable: BuiltExecutable.path("chatfeedd"),
                arguments: ["--database", directory.path("d.sqlite"), "--config", config, "--listen", "127.0.0.1:0", "--log-level", "info"],
                stderrPath: stderr, onLine: { _ in }, onEnd: {})
            child.closeStdin()
            var port: Int?
            for _ in 0..<600 where port == nil {
                try await Task.sleep(for: .milliseconds(50))
                let log = child.stderrTail(1 << 16)
                if let range = log.range(of: #"address=127\.0\.0\.1:(\d+)"#, options: .regularExpression) {
                    port = Int(log[range].split(separator: ":").last!)
                }
            }
            let listening = try #require(port, "no 'gateway listening' line: \(child.stderrTail())")
            #expect(child.isRunning, "the end of stdin stopped a listening daemon: \(child.stderrTail())")

            let tokens = await GatewayTokens(secret: Array(secret.utf8))
            let token = try await tokens.mint(user: "me", expiresAt: Date().addingTimeInterval(60))
            var logger = Logger(label: "test")
            logger.logLevel = .critical
            let socket = try await TestSocket.connect(url: "ws://127.0.0.1:\(listening)/v1/feed", token: token, logger: logger)
            _ = try await socket.result("chat.create", ["chat": "a", "title": "A", "createdAt": 1])

            #expect(child.killIfRunning(SIGTERM))
            while try await socket.next() != nil {}
            #expect(try await socket.closeFrame()?.closeCode == WebSocketErrorCode(codeNumber: 1012))
            let status = await offPool { child.waitForExit(timeout: 30) }
            #expect(status == 0, "\(child.stderrTail())")
            let listed = try await BuiltExecutable.run("chatfeed", ["chats", "--json", "--database", directory.path("d.sqlite")])
            #expect(listed.stdout.contains(#""id":"a""#))
        }
    }
}
