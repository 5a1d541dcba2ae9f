import ChatModel
import Foundation
import SQLite
import Synchronization
import Testing
import TestSupport

@testable import ChatStore

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
                let store = try ChatDatabase(path: path)
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
        let store = try ChatDatabase(path: path)
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
                let store = try ChatDatabase(path: path)
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
        let impatient = try ChatDatabase(path: test.path, options: StoreOptions(busyTimeoutMilliseconds: 10))
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

extension ConcurrencyTests {
    /// What the daemon does: follow another connection's commits through `changes(after:)` into a
    /// mirror. Whatever the interleaving, the mirror ends equal to the store.
    @Test func followingTheChangeLogWhileAnotherConnectionWritesMissesNothing() throws {
        let test = try TestStore()
        let path = test.path
        let writerDone = Mutex(false)
        let writerError = Mutex<String?>(nil)
        let follower = test.store
        var mirror: [String: Chat] = [:]
        var sequence: Int64 = 0

        let writer = Thread {
            do {
                let store = try ChatDatabase(path: path)
                var random = SeededGenerator(seed: 99)
                for step in 0..<600 {
                    let chat = "c\(Int.random(in: 0..<12, using: &random))"
                    switch Int.random(in: 0..<10, using: &random) {
                    case 0: _ = try? store.apply(.createChat(id: chat, title: chat, createdAt: Int64(step)))
                    case 1: _ = try? store.apply(.removeChat(id: chat))
                    case 2: _ = try? store.apply(.markRead(id: chat))
                    default:
                        _ = try store.apply([
                            message("m\(step)", in: chat, at: Int64.random(in: 0...1000, using: &random)),
                            .renameChat(id: chat, title: "t\(step % 3)"),
                        ])
                    }
                }
            } catch {
                writerError.withLock { $0 = "\(error)" }
            }
            writerDone.withLock { $0 = true }
        }
        writer.start()
        var finished = false
        while !finished {
            finished = writerDone.withLock { $0 }
            let (changes, latest) = try follower.changes(after: sequence)
            for change in changes { mirror[change.chatID] = change.chat }
            sequence = latest
        }
        let (changes, latest) = try follower.changes(after: sequence)
        for change in changes { mirror[change.chatID] = change.chat }
        #expect(writerError.withLock { $0 } == nil)
        let all = try follower.allChats()
        #expect(latest == all.latestSequence)
        #expect(mirror.values.compactMap { $0 }.sorted { $0.orderKey < $1.orderKey } == all.chats)
    }
}
