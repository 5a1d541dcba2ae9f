import ChatfeedClient
import ChatModel
import ListDiff
import Testing
import TestSupport

/// Resumes through the client and the real engine, in process: random writes of every kind
/// (messages, edits, deletes, renames, reads, pins, unpins, `setPinned`, archiving, unarchiving,
/// mute, unmute, removals) while the app is away, then `subscribe(_:resumingFrom:)` with the rows
/// it showed — in both lists, windowed or whole, and unread-only. The test applies every batch to
/// its own rows through `UIKitBatchModel`, and each view ends equal to `chats.list`.
@Suite struct ResumeStreamTests {
    static let views: [SubscriptionOptions] = [
        SubscriptionOptions(limit: 8), SubscriptionOptions(), SubscriptionOptions(list: .archive), SubscriptionOptions(list: .archive, limit: 3),
        SubscriptionOptions(unreadOnly: true), SubscriptionOptions(list: .archive, unreadOnly: true),
    ]

    /// Applies an update to the rows the test keeps: a list replaces them, batches go through the
    /// UIKit model and must give the update's rows.
    static func apply(_ update: FeedUpdate, to rows: inout [Chat], _ options: SubscriptionOptions) throws {
        switch update.kind {
        case .snapshot, .reset:
            rows = update.chats
        case .batches:
            for step in update.steps {
                rows = try UIKitBatchModel.apply(step.batch, to: rows)
                #expect(rows == step.chats, "\(options), seq \(update.seq)")
            }
            #expect(rows == update.chats, "\(options), seq \(update.seq)")
        }
    }

    @Test(.hangGuard, arguments: [71, 72] as [UInt64])
    func resumesInEveryViewAfterWritesOfEveryKind(seed: UInt64) async throws {
        let directory = try TemporaryDirectory()
        let client = try await ChatClient(transport: InProcessTransport(database: directory.path("feed.sqlite")))
        var generator = SeededGenerator(seed: seed)
        var writer = RandomWriter()
        writer.undoesOften = true
        var shown: [[Chat]?] = Array(repeating: nil, count: Self.views.count)
        var animated = Array(repeating: 0, count: Self.views.count)
        for round in 0..<40 {
            // Away: anything from a few writes to a long absence.
            for _ in 0..<Int.random(in: 1...(round % 4 == 0 ? 60 : 8), using: &generator) {
                try await writer.write(to: client, using: &generator)
            }
            for (number, options) in Self.views.enumerated() {
                let subscription = try await client.subscribe(options, resumingFrom: shown[number], acknowledgement: .onNext)
                var updates = subscription.makeAsyncIterator()
                var rows = shown[number] ?? []
                let first = try #require(try await updates.next())
                #expect(first.seq == 0)
                if shown[number] != nil && first.kind == .batches { animated[number] += 1 }
                try Self.apply(first, to: &rows, options)
                // Live, then drained to the list as it is now.
                for _ in 0..<Int.random(in: 0...3, using: &generator) { try await writer.write(to: client, using: &generator) }
                let page = try await client.listChats(
                    list: options.list, unreadOnly: options.unreadOnly, limit: options.limit ?? 10_000)
                var last = first
                while rows != page.items || last.total != page.total || last.unread != page.unread {
                    last = try #require(try await updates.next())
                    try Self.apply(last, to: &rows, options)
                }
                shown[number] = rows
                await subscription.cancel()
            }
        }
        for (number, options) in Self.views.enumerated() {
            #expect(animated[number] >= 30, "\(options): \(animated[number]) of 39 resumes animated")
        }
        for method in ["chat.pin", "chat.unpin", "chat.setPinned", "chat.archive", "chat.unarchive", "chat.mute",
                       "chat.unmute", "chat.remove", "chat.markRead", "message.delete"] {
            #expect(writer.written[method, default: 0] >= 10, "\(method): \(writer.written)")
        }
        #expect(try await client.stats().subscriptions.isEmpty)
        await client.close()
    }
}
