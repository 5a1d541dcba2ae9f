import ChatfeedClient
import ChatfeedUIKit
import ChatModel
import Foundation
import Synchronization
import Testing
import TestSupport

/// The client over a real engine: random writes through it, a subscription applied to the fake
/// view through the adapter, and the rows it ends with equal to `chats.list`.
@MainActor @Suite(.serialized) struct EndToEndTests {
    /// A transport that keeps the connections it opened (to kill a child).
    final class RecordingTransport: ChatfeedTransport {
        let base: any ChatfeedTransport
        let opened = Mutex<[any ChatfeedConnection]>([])
        init(_ base: any ChatfeedTransport) { self.base = base }
        func connect() async throws -> any ChatfeedConnection {
            let connection = try await base.connect()
            opened.withLock { $0.append(connection) }
            return connection
        }
    }

    static func childTransport(_ directory: TemporaryDirectory) -> ChildProcessTransport {
        ChildProcessTransport(
            executable: URL(fileURLWithPath: BuiltExecutable.path("chatfeedd")),
            arguments: ["--database", directory.path("feed.sqlite"), "--log-level", "warning"])
    }

    /// A view, its adapter running the subscription, and a task that completes animations at
    /// random moments and takes the view in and out of its window.
    @MainActor final class Screen {
        let view = FakeTableView()
        let adapter: FeedViewAdapter
        var runner: Task<Void, any Error>?
        var animator: Task<Void, Never>?
        /// Updates with seq 0: the first list, and one per subscribe after a restart.
        var subscribes = 0
        /// Of those, the ones answered with batches from the rows the client had (`known`).
        var resumed = 0

        init(_ subscription: FeedSubscription, seed: UInt64) {
            adapter = FeedViewAdapter(view: view)
            view.dataSource = { [adapter] in adapter.chats }
            adapter.didApply = { [unowned self] update in 
                if update.seq == 0 { subscribes += 1 }
                if update.seq == 0 && update.kind == .batches { resumed += 1 }
            }
            runner = Task { [adapter] in try await adapter.run(subscription) }
            animator = Task { [view] in
                var generator = SeededGenerator(seed: seed)
                while !Task.isCancelled {
                    try? await Task.sleep(for: .microseconds(Int.random(in: 0...3_000, using: &generator)))
                    view.completeAnimations()
                    if Int.random(in: 0..<40, using: &generator) == 0 { view.isInWindow.toggle() }
                }
            }
        }

        /// Waits until the view shows `expected` (content included) with no animation running.
        func settle(on expected: [Chat]) async throws {
            view.isInWindow = true
            do {
                try await waitUntil(seconds: 20) { view.shown == expected && view.animating == 0 }
            } catch {
                Issue.record("the view shows \(view.shown.map(\.id)), chats.list has \(expected.map(\.id))")
            }
        }

        func stop() async throws {
            animator?.cancel()
            runner?.cancel()
        }
    }

    func randomStream(_ client: ChatClient, limit: Int?, writes: Int, seed: UInt64, killAfter: Int? = nil,
                      kill: (() async throws -> Void)? = nil) async throws -> Screen {
        let subscription = try await client.subscribe(SubscriptionOptions(limit: limit))
        let screen = Screen(subscription, seed: seed)
        var generator = SeededGenerator(seed: seed)
        var writer = RandomWriter()
        for number in 0..<writes {
            if number == killAfter { try await kill?() }
            try await writer.write(to: client, using: &generator)
        }
        let expected = try await client.listChats(limit: limit ?? 10_000).items
        try await screen.settle(on: expected)
        #expect(screen.adapter.chats == expected)
        #expect(screen.view.violations.isEmpty, "\(screen.view.violations)")
        #expect(screen.view.batchCount > 0)
        return screen
    }

    @Test(arguments: [nil, 8] as [Int?])
    func randomWritesOverAChildProcessReachTheView(limit: Int?) async throws {
        let directory = try TemporaryDirectory()
        let client = try await ChatClient(transport: Self.childTransport(directory))
        let screen = try await randomStream(client, limit: limit, writes: 400, seed: 10 + UInt64(limit ?? 0))
        try await screen.stop()
        await client.close()
    }

    @Test(arguments: [nil, 8] as [Int?])
    func randomWritesInProcessReachTheView(limit: Int?) async throws {
        let directory = try TemporaryDirectory()
        let client = try await ChatClient(transport: InProcessTransport(database: directory.path("feed.sqlite")))
        let screen = try await randomStream(client, limit: limit, writes: 400, seed: 30 + UInt64(limit ?? 0))
        try await screen.stop()
        await client.close()
    }

    @Test func anEngineReopenedInProcessResubscribesAndTheSequenceGoesOn() async throws {
        let directory = try TemporaryDirectory()
        let transport = RecordingTransport(InProcessTransport(database: directory.path("feed.sqlite")))
        let client = try await ChatClient(transport: transport)
        let screen = try await randomStream(client, limit: 10, writes: 300, seed: 41, killAfter: 150) {
            // The engine stops under the client (as when an app's engine is torn down and reopened).
            await transport.opened.withLock { $0[0] }.close()
            _ = try? await client.listChats(limit: 1)
            _ = try await client.listChats(limit: 1)
        }
        #expect(transport.opened.withLock { $0.count } == 2)
        #expect(screen.subscribes == 2 && screen.resumed == 1)
        try await screen.stop()
        await client.close()
    }

    @Test func aKilledChildIsRestartedAndTheSequenceGoesOn() async throws {
        let directory = try TemporaryDirectory()
        let transport = RecordingTransport(Self.childTransport(directory))
        let client = try await ChatClient(transport: transport)
        let screen = try await randomStream(client, limit: 10, writes: 300, seed: 21, killAfter: 150) {
            let child = try #require(transport.opened.withLock { $0.first } as? ChildProcessConnection)
            kill(child.processIdentifier, SIGKILL)
            // Reads wait for the new connection; the first may be the one the kill interrupted.
            _ = try? await client.listChats(limit: 1)
            _ = try await client.listChats(limit: 1)
        }
        #expect(transport.opened.withLock { $0.count } == 2)
        #expect(screen.subscribes == 2, "the first list, then the catch-up after the restart")
        #expect(screen.resumed == 1, "the catch-up is batches from the rows the client had")
        try await screen.stop()
        await client.close()
    }

    /// Three subscriptions at once — a window of the main list, the whole archive, the main list's
    /// unread chats — while random writes pin, archive and mute: each view ends with the rows of
    /// `chats.list` for its list, and with that list's total and unread counters.
    @Test(arguments: [false, true])
    func listsFiltersAndCountersReachTheirViews(inProcess: Bool) async throws {
        let directory = try TemporaryDirectory()
        let transport: any ChatfeedTransport = inProcess
            ? InProcessTransport(database: directory.path("feed.sqlite")) : Self.childTransport(directory)
        let client = try await ChatClient(transport: transport)
        let views = [SubscriptionOptions(limit: 8), SubscriptionOptions(list: .archive), SubscriptionOptions(unreadOnly: true)]
        var screens: [Screen] = []
        for (number, options) in views.enumerated() {
            screens.append(Screen(try await client.subscribe(options), seed: 50 + UInt64(number)))
        }
        var generator = SeededGenerator(seed: inProcess ? 61 : 62)
        var writer = RandomWriter()
        for _ in 0..<400 { try await writer.write(to: client, using: &generator) }
        for (screen, options) in zip(screens, views) {
            let page = try await client.listChats(list: options.list, unreadOnly: options.unreadOnly, limit: options.limit ?? 10_000)
            #expect(!page.items.isEmpty, "\(options): the random writes leave rows to compare")
            try await screen.settle(on: page.items)
            do {
                try await waitUntil(seconds: 20) { screen.adapter.total == page.total && screen.adapter.unread == page.unread }
            } catch {
                Issue.record("\(options): the view has \(screen.adapter.total) chats, \(screen.adapter.unread); chats.list \(page.total), \(page.unread)")
            }
            #expect(screen.view.violations.isEmpty, "\(screen.view.violations)")
            #expect(screen.view.batchCount > 0)
            try await screen.stop()
        }
        await client.close()
    }
}
