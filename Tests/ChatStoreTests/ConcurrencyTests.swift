import ChatModel
import Foundation
import Synchronization
import Testing

@testable import ChatStore

/// Runs `body(index)` on `count` threads at once and waits for all of them.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let done = DispatchGroup()
    for index in 0..<count {
        done.enter()
        let thread = Thread {
            body(index)
            done.leave()
        }
        thread.start()
    }
    done.wait()
}

@Suite struct ConcurrencyTests {
    /// Two connections, each with its own store on its own thread, open a fresh file and write
    /// into it at once, one transaction per event and in groups: nothing fails, nothing is lost.
    @Test func twoWritersOnOneFileLoseNothingAndNeverFail() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("shared.sqlite")
        let failures = Mutex<[String]>([])
        let eventsPerWriter = 300

        onThreads(2) { writer in
            do {
                let store = try ChatStore(path: path)
                for chat in ["shared", "own-\(writer)"] {
                    do { try store.apply(.createChat(id: chat, title: chat, createdAt: 0)) } catch ChatError.conflict {}
                }
                var posted = 0
                while posted < eventsPerWriter {
                    let chat = posted % 2 == 0 ? "shared" : "own-\(writer)"
                    if posted % 50 == 0 {
                        let group = (0..<10).map { message("w\(writer)-\(posted + $0)", in: chat, at: Int64(posted + $0)) }
                        for result in try store.apply(group) where (try? result.get()) != .posted(duplicate: false) {
                            failures.withLock { $0.append("group: \(result)") }
                        }
                        posted += 10
                    } else {
                        try store.apply(message("w\(writer)-\(posted)", in: chat, at: Int64(posted)))
                        posted += 1
                    }
                    _ = try store.allChats()
                }
            } catch {
                failures.withLock { $0.append("writer \(writer): \(error)") }
            }
        }

        #expect(failures.withLock { $0 } == [])
        let store = try ChatStore(path: path)
        #expect(try store.stats().messages == 2 * eventsPerWriter)
        let unread = try store.allChats().chats.reduce(0) { $0 + $1.unread }
        #expect(unread == Int64(2 * eventsPerWriter))
        #expect(try store.changes(after: 0).changes.count == 3)
    }

    /// A writer that finds the file locked by another connection's transaction waits for it.
    @Test func aWriterWaitsForALockInsteadOfFailing() throws {
        let test = try TestStore()
        try test.store.apply(.createChat(id: "a", title: "A", createdAt: 0))
        let holder = try Database(path: test.path)
        try holder.execute("BEGIN IMMEDIATE; UPDATE chat SET title = 'held' WHERE id = 'a'")
        let path = test.path
        let outcome = Mutex<String>("not run")
        let started = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        Thread {
            started.signal()
            do {
                let store = try ChatStore(path: path)
                try store.apply(.renameChat(id: "a", title: "after"))
                outcome.withLock { $0 = "ok" }
            } catch {
                outcome.withLock { $0 = "\(error)" }
            }
            finished.signal()
        }.start()
        started.wait()
        // Whether or not the writer reached the lock yet, it must end up committing after us.
        Thread.sleep(forTimeInterval: 0.2)
        try holder.execute("COMMIT")
        finished.wait()
        #expect(outcome.withLock { $0 } == "ok")
        #expect(try test.store.chat(id: "a")?.title == "after")
    }

    /// With a short busy timeout, a writer blocked for longer reports SQLITE_BUSY and changes nothing.
    @Test func aWriterBlockedPastTheBusyTimeoutFailsCleanly() throws {
        let test = try TestStore()
        try test.store.apply(.createChat(id: "a", title: "A", createdAt: 0))
        let holder = try Database(path: test.path)
        try holder.execute("BEGIN IMMEDIATE")
        let impatient = try ChatStore(path: test.path, options: StoreOptions(busyTimeoutMilliseconds: 10))
        do {
            try impatient.apply(.renameChat(id: "a", title: "B"))
            Issue.record("expected SQLITE_BUSY")
        } catch let error as SQLiteError {
            #expect(error.isBusy)
        }
        try holder.execute("ROLLBACK")
        #expect(try impatient.chat(id: "a")?.title == "A")
        try impatient.apply(.renameChat(id: "a", title: "B"))
    }
}
