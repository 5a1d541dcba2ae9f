import ChatfeedGateway
import Foundation
import JSONCodec
import NIOWebSocket
import Testing

extension GatewaySuites {
    /// The heartbeat (docs/GATEWAY.md, Close codes): a ping every `pingIntervalSeconds`; a ping
    /// not answered within two intervals closes the connection with 1001. A client that stops
    /// reading its socket for less than that stays connected and catches up.
    @Suite struct GatewayHeartbeatTests {
        /// The test's client answers pings and resumes reading from the cooperative pool, which a
        /// whole run keeps busy: a pause of 1.5 intervals leaves it half an interval (1 s) to spare.
        static let interval = 2.0

        /// Makes `reader` stop reading its socket (after the batch of a chat `writer` creates)
        /// for `seconds`, while `writer` creates `more` chats.
        static func pause(
            _ reader: TestSocket, for seconds: Double, writer: TestSocket, chats: inout Int, more: Int
        ) async throws {
            reader.stopReading()
            // The reader stops once it has read the batch of this chat.
            _ = try await writer.result("chat.create", ["chat": .string("c\(chats)"), "title": "T", "createdAt": .integer(chats)])
            chats += 1
            let resume = ContinuousClock.now + .seconds(seconds)
            for _ in 0..<more {
                _ = try await writer.result("chat.create", ["chat": .string("c\(chats)"), "title": "T", "createdAt": .integer(chats)])
                chats += 1
            }
            try await Task.sleep(until: resume)
            reader.resumeReading()
        }

        /// Reads `reader`'s batches until its window shows `chats` rows.
        static func catchUp(_ reader: TestSocket, to chats: Int) async throws {
            while true {
                let message = try #require(try await reader.next(), "the connection closed")
                reader.keep(message)
                if message["method"] == .string("feed.batch"), message["params"]?["total"] == .integer(chats) { return }
            }
        }

        @Test func aClientPausedForUnderTwoIntervalsStaysAndCatchesUp() async throws {
            let harness = try await GatewayHarness { $0.pingIntervalSeconds = Self.interval }
            let reader = try await harness.connect("me")
            let writer = try await harness.connect("me")
            _ = try await reader.result("feed.subscribe", ["limit": 100, "maxInFlight": 1000])
            // An idle client answers the pings and stays.
            try await Task.sleep(for: .seconds(Self.interval * 2.5))
            _ = try await reader.result("server.version")
            // Three pauses of 1.5 intervals, each at another phase of the pings (one interval
            // without a pong, the old rule, closed such a client at least one time in two).
            var chats = 0
            for _ in 0..<3 {
                try await Self.pause(reader, for: 1.5 * Self.interval, writer: writer, chats: &chats, more: 5)
                try await Self.catchUp(reader, to: chats)
                _ = try await reader.result("server.version")
            }
            // Every batch came, in order; the writer was never delayed or closed either.
            let seqs = reader.notifications.filter { $0["method"] == .string("feed.batch") }.compactMap { $0["params"]?["seq"]?.int64Value }
            #expect(seqs == Array(1...Int64(seqs.count)))
            _ = try await writer.result("server.version")
            try await harness.stop()
        }

        @Test func aClientPausedForThreeIntervalsIsClosedWith1001() async throws {
            // Late scheduling only lengthens the pause: a shorter interval is safe here (the
            // writer still answers its pings within two).
            let interval = Self.interval / 2
            let harness = try await GatewayHarness { $0.pingIntervalSeconds = interval }
            let reader = try await harness.connect("me")
            let writer = try await harness.connect("me")
            _ = try await reader.result("feed.subscribe", ["limit": 100, "maxInFlight": 1000])
            var chats = 0
            try await Self.pause(reader, for: 4.5 * interval, writer: writer, chats: &chats, more: 3)
            // What was sent before the close is read, then the close.
            while let message = try await reader.next() { reader.keep(message) }
            let close = try #require(try await reader.closeFrame())
            #expect(close.closeCode == .goingAway)
            #expect(close.reason?.contains("pong") == true)
            // The other connection, which answered its pings, stays.
            _ = try await writer.result("server.version")
            try await harness.stop()
        }
    }
}
