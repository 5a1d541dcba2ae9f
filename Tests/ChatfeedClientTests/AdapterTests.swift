import ChatfeedClient
import ChatfeedUIKit
import ChatModel
import ListDiff
import Testing
import TestSupport

/// The adapter alone, with hand-made updates and the fake view.
@MainActor @Suite(.hangGuard) struct AdapterTests {
    static func chat(_ id: String, revision: Int64 = 1) -> Chat {
        Chat(id: id, title: id, createdAt: 0, lastMessage: nil, lastMessageDate: 0, unread: revision - 1, revision: revision)
    }

    let a = chat("a")
    let b = chat("b")
    let c = chat("c")

    func makeView() -> (FakeTableView, FeedViewAdapter) {
        let view = FakeTableView()
        let adapter = FeedViewAdapter(view: view)
        view.dataSource = { adapter.chats }
        return (view, adapter)
    }

    @Test func aStructuralBatchAndItsDeferredUpdatesAreTwoAnimationsOneAfterTheOther() async throws {
        let (view, adapter) = makeView()
        await adapter.apply(FeedUpdate(kind: .snapshot, seq: 0, steps: [], chats: [a, b, c], total: 3))
        #expect(view.reloadCount == 1 && view.shown == [a, b, c])

        let c2 = Self.chat("c", revision: 2)
        let a2 = Self.chat("a", revision: 2)
        let move = Batch<Chat>(moves: [Move(from: 2, to: 0)])
        let deferred = Batch<Chat>(updates: [IndexedItem(index: 0, item: c2), IndexedItem(index: 1, item: a2)])
        let update = FeedUpdate(
            kind: .batches, seq: 1,
            steps: [FeedStep(batch: move, chats: [c, a, b]), FeedStep(batch: deferred, chats: [c2, a2, b])],
            chats: [c2, a2, b], total: 3)
        let applying = Task { await adapter.apply(update) }
        try await waitUntil { view.animating == 1 }
        #expect(view.batchCount == 1 && view.shown == [c, a, b], "the move first, with the data source of after it")
        view.completeAnimations()
        try await waitUntil { view.batchCount == 2 }
        #expect(view.shown == [c2, a2, b], "then the deferred updates")
        view.completeAnimations()
        await applying.value
        #expect(view.violations.isEmpty, "\(view.violations)")
        #expect(adapter.chats == [c2, a2, b] && view.reloadCount == 1)
    }

    @Test func outOfAWindowTheAdapterSetsTheDataAndReloads() async throws {
        let (view, adapter) = makeView()
        await adapter.apply(FeedUpdate(kind: .snapshot, seq: 0, steps: [], chats: [a, b], total: 2))
        view.isInWindow = false
        let update = FeedUpdate(
            kind: .batches, seq: 1, steps: [FeedStep(batch: Batch(deletes: [0]), chats: [b])], chats: [b], total: 1)
        await adapter.apply(update)
        #expect(view.batchCount == 0 && view.reloadCount == 2 && view.shown == [b])
        #expect(view.violations.isEmpty, "\(view.violations)")
    }

    @Test func aViewThatLeavesItsWindowBetweenTwoStepsIsReloaded() async throws {
        let (view, adapter) = makeView()
        await adapter.apply(FeedUpdate(kind: .snapshot, seq: 0, steps: [], chats: [a, b], total: 2))
        let b2 = Self.chat("b", revision: 2)
        let update = FeedUpdate(
            kind: .batches, seq: 1,
            steps: [FeedStep(batch: Batch(moves: [Move(from: 1, to: 0)]), chats: [b, a]),
                    FeedStep(batch: Batch(updates: [IndexedItem(index: 0, item: b2)]), chats: [b2, a])],
            chats: [b2, a], total: 2)
        let applying = Task { await adapter.apply(update) }
        try await waitUntil { view.animating == 1 }
        view.isInWindow = false
        view.completeAnimations()
        await applying.value
        #expect(view.batchCount == 1 && view.shown == [b2, a] && view.reloadCount == 2)
        #expect(view.violations.isEmpty, "\(view.violations)")
    }

    @Test func theFakeViewCatchesWhatUIKitWouldCrashOn() async throws {
        let view = FakeTableView()
        var rows = [a, b]
        view.dataSource = { rows }
        view.reloadAllRows()
        // The data source changed, but the batch says nothing: "invalid number of rows".
        rows = [a]
        view.performBatch({}, completion: { _ in })
        #expect(view.violations.count == 1)
        view.completeAnimations()
        view.isInWindow = false
        view.performBatch({ view.deleteRows([0]) }, completion: { _ in })
        view.insertRows([0])
        #expect(view.violations.count == 4)
    }
}

/// Polls `condition` on the main actor every millisecond, up to `seconds`.
@MainActor
func waitUntil(seconds: Double = 10, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while !condition() {
        guard ContinuousClock.now < deadline else { throw ScriptError("timed out waiting") }
        try await Task.sleep(for: .milliseconds(1))
    }
}
