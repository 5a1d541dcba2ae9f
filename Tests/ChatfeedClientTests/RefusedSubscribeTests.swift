import ChatfeedClient
import ChatModel
import Foundation
import JSONCodec
import Synchronization
import Testing
import TestSupport

/// A subscribe answer the client refuses, over the real in-process engine: the engine had made
/// the subscription, so the client must end it — else the engine feeds a subscription nobody reads.
@Suite(.hangGuard) struct RefusedSubscribeTests {
    /// The in-process engine, with the results of its `feed.subscribe` answers spoiled by `spoil`
    /// (a resume's count off by one, an unreadable answer) before the client reads them.
    final class SpoilingTransport: ChatfeedTransport {
        let base: InProcessTransport
        let spoil: @Sendable (JSONObject) -> JSONObject?
        /// Every line the engine wrote, as it wrote it.
        let written = Mutex<[JSONValue]>([])

        init(database: String, spoil: @escaping @Sendable (JSONObject) -> JSONObject?) {
            base = InProcessTransport(database: database)
            self.spoil = spoil
        }

        func connect() async throws -> any ChatfeedConnection {
            let connection = try await base.connect()
            let (lines, continuation) = AsyncStream.makeStream(of: [UInt8].self)
            Task { [self] in
                for await line in connection.lines {
                    guard let message = try? JSONValue(parsing: line), case .object(var object) = message else {
                        continuation.yield(line)
                        continue
                    }
                    self.written.withLock { $0.append(message) }
                    if case .object(let result)? = object["result"], result["subscription"] != nil,
                       let spoiled = self.spoil(result) {
                        object["result"] = .object(spoiled)
                        continuation.yield(JSONValue.object(object).serialized())
                    } else {
                        continuation.yield(line)
                    }
                }
                continuation.finish()
            }
            return Connection(base: connection, lines: lines)
        }

        /// The notifications the engine wrote for `subscription`.
        func notifications(of subscription: String) -> [JSONValue] {
            written.withLock { $0.filter { $0["method"] != nil && $0["params"]?["subscription"]?.stringValue == subscription } }
        }

        /// The `subscription` of every subscribe answer the engine wrote.
        var subscribeAnswers: [String] {
            written.withLock { $0.compactMap { $0["result"]?["subscription"]?.stringValue } }
        }

        struct Connection: ChatfeedConnection {
            let base: any ChatfeedConnection
            let lines: AsyncStream<[UInt8]>
            var endReason: String? { base.endReason }
            func send(_ line: [UInt8]) throws { try base.send(line) }
            func close() async { await base.close() }
        }
    }

    static func makeChats(_ client: ChatClient, _ ids: [String]) async throws {
        for (number, id) in ids.enumerated() { try await client.createChat(id, title: id, createdAt: Int64(1_000 + number)) }
    }

    @Test func aCatchUpThatDoesNotFitTheRowsIsUnsubscribedAndReplacedByTheList() async throws {
        let directory = try TemporaryDirectory()
        // Every resume answer says one row more than its batches give.
        let transport = SpoilingTransport(database: directory.path("feed.sqlite")) { result in
            guard result["batches"] != nil, let count = result["count"]?.int64Value else { return nil }
            var spoiled = result
            spoiled["count"] = .integer(count + 1)
            return spoiled
        }
        let client = try await ChatClient(transport: transport)
        try await Self.makeChats(client, ["a", "b", "c", "d"])
        let rows = try await client.listChats().items
        // While the app was away: b got a message, d was renamed.
        try await client.postMessage(chat: "b", id: "m1", sender: "ann", text: "hi", sentAt: 9_000)
        try await client.renameChat("d", title: "D!")

        let subscription = try await client.subscribe(resumingFrom: rows)
        var updates = subscription.makeAsyncIterator()
        let first = try #require(try await updates.next())
        let current = try await client.listChats().items
        #expect(first.kind == .snapshot && first.chats == current, "the list, since the catch-up was refused")

        let answers = transport.subscribeAnswers
        try #require(answers.count == 2, "the resume, then the plain subscribe: \(answers)")
        let (refused, replacement) = (answers[0], answers[1])
        let stats = try await client.stats()
        #expect(stats.subscriptions.map(\.subscription) == [replacement], "the engine no longer serves \(refused)")

        // The replacement goes on; the refused subscription gets nothing.
        try await client.postMessage(chat: "c", id: "m2", sender: "bob", text: "yo", sentAt: 9_500)
        let next = try #require(try await updates.next())
        #expect(next.seq == 1 && next.chats.first?.id == "c")
        #expect(transport.notifications(of: refused).isEmpty)
        #expect(!transport.notifications(of: replacement).isEmpty)
        await client.close()
    }

    @Test func anUnreadableSubscribeAnswerThrowsAndIsUnsubscribed() async throws {
        let directory = try TemporaryDirectory()
        let transport = SpoilingTransport(database: directory.path("feed.sqlite")) { result in
            var spoiled = result
            spoiled["items"] = .string("not a list")
            return spoiled
        }
        let client = try await ChatClient(transport: transport)
        try await Self.makeChats(client, ["a", "b"])
        do {
            _ = try await client.subscribe(SubscriptionOptions(limit: 5))
            Issue.record("an unreadable answer was installed")
        } catch let ChatfeedClientError.malformedResponse(method, reason) {
            #expect(method == "feed.subscribe" && reason.contains("items"))
        }
        let refused = try #require(transport.subscribeAnswers.first)
        #expect(try await client.stats().subscriptions.isEmpty, "the engine no longer serves \(refused)")
        try await client.postMessage(chat: "a", id: "m1", sender: "ann", text: "hi", sentAt: 9_000)
        _ = try await client.listChats()
        #expect(transport.notifications(of: refused).isEmpty)
        await client.close()
    }
}
