import ChatfeedEngine
import ChatModel
import ChatStore
import Foundation
import Synchronization
import JSONCodec
import Testing
import TestSupport

/// Subscribers that ack while the engine is behind on another session's input (a backend that
/// sent thousands of writes at once): each ack is handled between the writer's rounds, and every
/// subscription still gets its deferred update after each structural batch and one coalesced
/// batch per ack. At the end every mirror equals its list in the database. (The gateway's stall
/// run, Benchmarks/Results/gateway.md, saw a daemon behind its input and could not tell.)
@Suite(.serialized) struct EngineBehindTests {
    static let chats = (0..<30).map { "c\($0)" }

    /// The writer's flood: posts (some late), edits of the last message, reads, pins.
    static func flood(count: Int, seed: UInt64) -> [UInt8] {
        var random = SeededGenerator(seed: seed)
        var lines: [UInt8] = []
        var clock: Int64 = 10_000
        var lastPost: [String: String] = [:]
        for id in 1...count {
            let chat = chats[Int.random(in: 0..<chats.count, using: &random)]
            clock += 1
            let (method, params): (String, JSONObject)
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<10 where lastPost[chat] != nil:
                (method, params) = ("message.edit", ["id": .string(lastPost[chat]!), "text": .string("edit \(id)")])
            case 10..<20: (method, params) = ("chat.markRead", ["chat": .string(chat)])
            case 20..<23: (method, params) = (Bool.random(using: &random) ? "chat.pin" : "chat.unpin", ["chat": .string(chat)])
            default:
                let late = Int.random(in: 0..<8, using: &random) == 0
                lastPost[chat] = "m\(id)"
                (method, params) = ("message.post", [
                    "chat": .string(chat), "id": .string("m\(id)"), "sender": "ann", "text": .string("text \(id)"),
                    "sentAt": .integer(late ? clock - Int64.random(in: 50...500, using: &random) : clock),
                ])
            }
            lines += SessionClient.line(id: id, method, params)
        }
        return lines
    }

    /// (On threads of its own: in a whole test run the cooperative pool is busy with other
    /// tests, and the subscribers' round trips would wait until the flood is over.)
    @Test(.hangGuard, arguments: [7 as UInt64, 2026])
    func subscribersAckingWhileTheEngineIsBehindGetEveryBatch(seed: UInt64) async throws {
        try await withTaskExecutorPreference(DedicatedExecutor.shared) { try await Self.ackWhileBehind(seed: seed) }
    }

    static func ackWhileBehind(seed: UInt64) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("behind.sqlite")
        let engine = try ChatEngine(options: EngineOptions(databasePath: path, store: StoreOptions(durability: .normal)))
        defer { engine.stop(); engine.waitUntilStopped() }
        let setup = SessionClient(engine.openInProcessSession())
        for (number, chat) in chats.enumerated() {
            _ = try await setup.result("chat.create", ["chat": .string(chat), "title": "T", "createdAt": .integer(Int64(number))])
        }
        typealias Mirror = MultiUserFeedTests.Mirror
        let mirrors = [
            Mirror(SessionClient(engine.openInProcessSession()), user: "me", view: .main, limit: 8, maxInFlight: 1, ackEvery: 1),
            Mirror(SessionClient(engine.openInProcessSession()), user: "me", view: .main, limit: nil, maxInFlight: 2, ackEvery: 1),
            Mirror(
                SessionClient(engine.openInProcessSession()), user: "me", view: ChatListView(list: .main, unreadOnly: true),
                limit: 5, maxInFlight: 1, ackEvery: 1),
        ]
        for mirror in mirrors { try await mirror.subscribe() }

        // The writer sends its whole flood at once and reads its answers on its own.
        let count = 20_000
        let writer = engine.openInProcessSession()
        let answered = AnswerCount()
        let answers = Task(executorPreference: DedicatedExecutor.shared) {
            // Each element is one line: the writer has no subscription, so each is an answer.
            for await _ in writer.lines where answered.add(1) >= count { break }
            return answered.value
        }
        // (`send` waits while the session's queued input is full: on a thread of its own.)
        let flood = flood(count: count, seed: seed)
        Thread { _ = writer.send(flood) }.start()

        // Meanwhile every subscriber reads and acks what it gets, again and again. Each of its
        // requests waits behind at most about 256 KiB of the writer's input (one of the engine's
        // rounds; InputQueueTests checks that bound exactly), so on an idle machine whole rounds
        // of reading and acking end while the writer's answers are not all in: 0 of them did
        // before the input was queued in pieces. How many is a matter of scheduling (a loaded
        // machine may run the whole flood first), so it is not asserted; what is asserted holds
        // however the acks and the flood interleave.
        while answered.value < count {
            for mirror in mirrors { try await mirror.sync(ackAll: true) }
        }
        #expect(await answers.value == count)

        let reader = try ChatDatabase(path: path, options: StoreOptions(readOnly: true))
        for mirror in mirrors {
            try await mirror.settle()
            let expected = try MultiUserFeedTests.expected(reader, user: mirror.user, view: mirror.view, limit: mirror.limit)
            #expect(mirror.rows == expected.rows, "\(mirror.description): \(mirror.rows.map(\.id)) vs \(expected.rows.map(\.id))")
            #expect(mirror.total == expected.total, "\(mirror.description) total")
            #expect(mirror.unread == expected.unread, "\(mirror.description) unread")
        }
        #expect(mirrors.map(\.notifications).reduce(0, +) > 3, "the flood reached the subscribers in coalesced batches")
    }
}

/// The writer's answers read so far.
private final class AnswerCount: Sendable {
    private let count = Atomic<Int>(0)

    /// Adds `lines` and returns the new count.
    func add(_ lines: Int) -> Int { count.add(lines, ordering: .relaxed).newValue }

    var value: Int { count.load(ordering: .relaxed) }
}
