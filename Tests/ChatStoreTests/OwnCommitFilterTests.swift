import ChatModel
import ChatStore
import Foundation
import SQLite
import Synchronization
import Testing

/// The filter that tells the writer's own commits and checkpoints from another process's
/// commits, for the engine's database watcher.
@Suite struct OwnCommitFilterTests {
    /// What the filter's handler heard, in order.
    final class Heard: Sendable {
        let events = Mutex<[String]>([])
        func record(_ writes: OwnCommitFilter.OwnWrites) {
            events.withLock {
                switch writes {
                case .began: $0.append("began")
                case .ended(let foreign, let checkpoint):
                    $0.append((foreign ? "ended, foreign possible" : "ended") + (checkpoint ? ", after a checkpoint" : ""))
                }
            }
        }
        var all: [String] { events.withLock { $0 } }
    }

    @Test func ownCommitsAndCheckpointsAreBracketedAndAForeignCommitDuringACheckpointIsReported() throws {
        let test = try TestStore()
        try test.store.apply(.createChat(id: "a", title: "A", createdAt: 0))
        let filter = OwnCommitFilter(databasePath: test.path)
        let heard = Heard()
        filter.onOwnWrites { heard.record($0) }

        // The writer's own commit: nothing foreign after it.
        filter.commitWillBegin()
        try test.store.apply(.createChat(id: "b", title: "B", createdAt: 1))
        filter.commitDidEnd()
        #expect(filter.foreignChange() == nil)
        #expect(heard.all == ["began", "ended"])

        // A checkpoint with the writer's commit inside it: one bracket, the outer one.
        filter.checkpointWillBegin()
        filter.commitWillBegin()
        try test.store.apply(.createChat(id: "c", title: "C", createdAt: 2))
        filter.commitDidEnd()
        filter.checkpointDidEnd()
        #expect(heard.all == ["began", "ended", "began", "ended, after a checkpoint"])

        // Another connection commits while a checkpoint runs (it holds no write lock): the end
        // of the checkpoint says so, since the watch was not listening.
        filter.checkpointWillBegin()
        try ChatDatabase(path: test.path, options: StoreOptions(durability: .normal))
            .apply(.createChat(id: "other", title: "O", createdAt: 3))
        filter.checkpointDidEnd()
        #expect(heard.all.last == "ended, foreign possible, after a checkpoint")
        #expect(filter.foreignChange() != nil)

        // Removed, the handler hears nothing more.
        filter.onOwnWrites(nil)
        filter.commitWillBegin()
        filter.commitDidEnd()
        #expect(heard.all.count == 6)
    }
}
