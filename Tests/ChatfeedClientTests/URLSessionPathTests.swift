@testable import ChatfeedClient
import Foundation
import Synchronization
import Testing
import TestSupport

/// The URLSession path of `WebSocketTransport` (the one Apple platforms use), driven through a
/// scripted `WebSocketTaskChannel`: libcurl here has no WebSocket support, so
/// `URLSessionWebSocketTask` compiles on Linux but cannot connect.
@Suite struct URLSessionPathTests {
    /// A WebSocket task whose server the test plays.
    final class ScriptedChannel: WebSocketTaskChannel, @unchecked Sendable {
        enum Upgrade { case accepted, refused, silent }
        private struct State {
            var resumed = false
            var sent: [String] = []
            var cancelled: [Int] = []
            var closeCode = 0
        }
        private let upgrade: Upgrade
        private let state = Mutex(State())
        private let incoming: AsyncStream<String>
        private let server: AsyncStream<String>.Continuation
        /// Used by the one receiving task only.
        private var iterator: AsyncStream<String>.Iterator

        init(_ upgrade: Upgrade) {
            self.upgrade = upgrade
            (incoming, server) = AsyncStream.makeStream(of: String.self)
            iterator = incoming.makeAsyncIterator()
        }

        func resume() { state.withLock { $0.resumed = true } }

        func sendPing(_ answered: @escaping @Sendable ((any Error)?) -> Void) {
            guard state.withLock({ $0.resumed }) else { return answered(URLError(.cancelled)) }
            switch upgrade {
            case .accepted: Task { answered(nil) }
            case .refused: Task { answered(URLError(.badServerResponse)) }
            case .silent: break
            }
        }

        func sendText(_ text: String) async throws {
            try state.withLock { state in
                guard state.closeCode == 0 else { throw URLError(.networkConnectionLost) }
                state.sent.append(text)
            }
        }

        func receiveText() async throws -> String? {
            guard let next = await iterator.next() else { throw URLError(.networkConnectionLost) }
            return next
        }

        func cancel(code: Int) {
            state.withLock { state in
                state.cancelled.append(code)
                if state.closeCode == 0 { state.closeCode = code }
            }
            server.finish()
        }

        var closeCodeNumber: Int { state.withLock { $0.closeCode } }

        /// The server sends a text frame.
        func serverSends(_ text: String) { server.yield(text) }

        /// The server closes with `code`.
        func serverCloses(_ code: Int) {
            state.withLock { $0.closeCode = code }
            server.finish()
        }

        var sent: [String] { state.withLock { $0.sent } }
        var cancelled: [Int] { state.withLock { $0.cancelled } }
    }

    /// Waits up to 10 s for `condition`.
    private func eventually(_ condition: () -> Bool) async throws {
        for _ in 0..<1_000 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
    }

    @Test(.hangGuard) func anAnsweredPingOpensItAndLinesGoBothWaysUntilTheServerCloses() async throws {
        let channel = ScriptedChannel(.accepted)
        let connection = try await WebSocketConnection.open(channel: channel, url: "ws://gateway/v1/feed", handshakeTimeout: .seconds(10))
        try connection.send(Array(#"{"jsonrpc":"2.0","id":1,"method":"server.version"}"#.utf8) + [0x0A])
        try connection.send(Array(#"{"jsonrpc":"2.0","id":2,"method":"chats.list"}"#.utf8) + [0x0A])
        try await eventually { channel.sent.count == 2 }
        #expect(channel.sent == [#"{"jsonrpc":"2.0","id":1,"method":"server.version"}"#, #"{"jsonrpc":"2.0","id":2,"method":"chats.list"}"#])
        channel.serverSends(#"{"jsonrpc":"2.0","id":1,"result":{}}"#)
        var lines = connection.lines.makeAsyncIterator()
        #expect(await lines.next() == Array(#"{"jsonrpc":"2.0","id":1,"result":{}}"#.utf8))
        channel.serverCloses(1012)
        #expect(await lines.next() == nil)
        #expect(connection.endReason == "the WebSocket closed (1012)")
        #expect(throws: ChatfeedClientError.self) { try connection.send([0x7B, 0x7D, 0x0A]) }
    }

    @Test(.hangGuard) func closingSendsEveryLineThenClosesNormally() async throws {
        let channel = ScriptedChannel(.accepted)
        let connection = try await WebSocketConnection.open(channel: channel, url: "ws://gateway/v1/feed", handshakeTimeout: .seconds(10))
        for id in 1...50 { try connection.send(Array("{\"id\":\(id)}".utf8) + [0x0A]) }
        await connection.close()
        #expect(channel.sent == (1...50).map { "{\"id\":\($0)}" })
        #expect(channel.cancelled == [1000])
    }

    @Test(.hangGuard) func aRefusedUpgradeIsAFailedAttempt() async throws {
        let channel = ScriptedChannel(.refused)
        await #expect {
            _ = try await WebSocketConnection.open(channel: channel, url: "ws://gateway/v1/feed", handshakeTimeout: .seconds(10))
        } throws: { error in
            guard case ChatfeedClientError.cannotStart(let reason) = error else { return false }
            return reason.hasPrefix("cannot open ws://gateway/v1/feed")
        }
        #expect(channel.cancelled == [1001])
    }

    /// A gateway that never answers the upgrade (one shutting down as the request arrives).
    @Test(.hangGuard) func anUnansweredUpgradeFailsAfterTheHandshakeTimeout() async throws {
        let channel = ScriptedChannel(.silent)
        let started = ContinuousClock.now
        await #expect {
            _ = try await WebSocketConnection.open(channel: channel, url: "ws://gateway/v1/feed", handshakeTimeout: .milliseconds(200))
        } throws: { error in
            guard case ChatfeedClientError.cannotStart(let reason) = error else { return false }
            return reason.contains("did not answer the WebSocket upgrade within")
        }
        #expect(ContinuousClock.now - started >= .milliseconds(200))
        #expect(channel.cancelled == [1001])
    }
}
