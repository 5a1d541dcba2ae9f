import ChatModel
import ChatfeedClient
import ChatfeedEngine
import Foundation
import Testing
import TestSupport

/// Several clients on one in-process engine (an app and its extension): each is a session of its
/// own, sees the other's writes in its feed, and ending one leaves the other's subscriptions.
@Suite struct SharedEngineTests {
    @Test func twoClientsShareOneEngine() async throws {
        let directory = try TemporaryDirectory()
        let engine = try ChatEngine(options: EngineOptions(databasePath: directory.path("shared.sqlite")))
        defer { engine.stop() }
        let app = try await ChatClient(transport: InProcessTransport(engine: engine))
        let widget = try await ChatClient(transport: InProcessTransport(engine: engine))
        let appFeed = try await app.subscribe(SubscriptionOptions(limit: 5))
        let widgetFeed = try await widget.subscribe(SubscriptionOptions(limit: 5))
        #expect(try await app.stats().subscriptions.count == 2)

        try await widget.createChat("a", title: "A", createdAt: 1000)
        var appUpdates = appFeed.makeAsyncIterator()
        var widgetUpdates = widgetFeed.makeAsyncIterator()
        _ = try await appUpdates.next()  // the snapshot
        _ = try await widgetUpdates.next()
        let seenByApp = try #require(try await appUpdates.next())
        #expect(seenByApp.chats.map(\.id) == ["a"])
        let seenByWidget = try #require(try await widgetUpdates.next())
        #expect(seenByWidget.chats.map(\.id) == ["a"])

        await widget.close()
        // The widget's session ended with its subscription; the app's goes on.
        #expect(try await app.stats().subscriptions.count == 1)
        try await app.createChat("b", title: "B", createdAt: 2000)
        await appFeed.acknowledge(seenByApp)
        let next = try #require(try await appUpdates.next())
        #expect(next.chats.map(\.id) == ["b", "a"])
        await app.close()
        #expect(!engine.isStopped)
    }
}
