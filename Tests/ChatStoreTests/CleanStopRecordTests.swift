import ChatModel
import ChatStore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The clean stop's record (`CleanStopRecord`): it matches the file it was written for as long as
/// nothing reached that file since, and nothing else.
@Suite struct CleanStopRecordTests {
    /// A store with a few chats, closed with its log emptied into the file.
    private static func closedStore(in directory: TemporaryDirectory) throws -> String {
        let path = directory.path("chats.sqlite")
        try write(["a", "b", "c"], to: path)
        return path
    }

    /// Creates chats `ids` in the store at `path` and closes it, its log emptied into the file.
    private static func write(_ ids: [String], to path: String) throws {
        let store = try ChatDatabase(path: path)
        for result in try store.apply(ids.map { .createChat(id: $0, title: $0.uppercased(), createdAt: 1) }) {
            _ = try result.get()
        }
        #expect(try store.checkpoint(truncate: true))
    }

    @Test func aRecordMatchesTheUnchangedFileUntilItIsRemoved() throws {
        let directory = try TemporaryDirectory()
        let path = try Self.closedStore(in: directory)
        #expect(!CleanStopRecord.matches(databaseAt: path), "no record yet")
        #expect(CleanStopRecord.write(forDatabaseAt: path))
        #expect(FileManager.default.fileExists(atPath: CleanStopRecord.path(for: path)))
        #expect(CleanStopRecord.matches(databaseAt: path))
        // Reading the file changes nothing.
        let reader = try ChatDatabase(path: path, options: StoreOptions(readOnly: true))
        #expect(try reader.chats(offset: 0, limit: 10).count == 3)
        #expect(CleanStopRecord.matches(databaseAt: path))
        // Taken away (as a start that may write does), it matches nothing.
        CleanStopRecord.remove(forDatabaseAt: path)
        #expect(!FileManager.default.fileExists(atPath: CleanStopRecord.path(for: path)))
        #expect(!CleanStopRecord.matches(databaseAt: path))
    }

    @Test func aWriteMakesTheRecordStaleBeforeAndAfterItsCheckpoint() throws {
        let directory = try TemporaryDirectory()
        let path = try Self.closedStore(in: directory)
        #expect(CleanStopRecord.write(forDatabaseAt: path))
        // Committed into the log only: the database file itself is unchanged, the log is not empty.
        let store = try ChatDatabase(path: path)
        _ = try store.apply([.createChat(id: "d", title: "D", createdAt: 2)])[0].get()
        #expect(!CleanStopRecord.matches(databaseAt: path))
        // Copied into the file and the log emptied: the file's times (and here its size) changed.
        #expect(try store.checkpoint(truncate: true))
        #expect(!CleanStopRecord.matches(databaseAt: path))
        // A record made now matches again.
        #expect(CleanStopRecord.write(forDatabaseAt: path))
        #expect(CleanStopRecord.matches(databaseAt: path))
    }

    @Test func aTouchACopyOrADamagedPageMakesTheRecordStale() throws {
        let directory = try TemporaryDirectory()
        let path = try Self.closedStore(in: directory)

        // The same contents with other times (touch, or a restore that keeps the modification time).
        #expect(CleanStopRecord.write(forDatabaseAt: path))
        var times = [timespec(tv_sec: 1_700_000_000, tv_nsec: 0), timespec(tv_sec: 1_700_000_000, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        #expect(!CleanStopRecord.matches(databaseAt: path))

        // Another file with the same bytes put in its place.
        #expect(CleanStopRecord.write(forDatabaseAt: path))
        let copy = directory.path("copy.sqlite")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        #expect(rename(copy, path) == 0)
        #expect(!CleanStopRecord.matches(databaseAt: path))

        // A page overwritten in place, the size kept.
        #expect(CleanStopRecord.write(forDatabaseAt: path))
        try scribbleOverPage(1, ofFile: path)
        #expect(!CleanStopRecord.matches(databaseAt: path))
    }

    @Test func aRecordOfAnotherFormOrOfNoFileMatchesNothing() throws {
        let directory = try TemporaryDirectory()
        let path = try Self.closedStore(in: directory)
        for text in ["", "chatfeed clean stop 1: 1 2 3", "chatfeed clean stop 2: 1 2 3 4 5 6 7\n", "garbage\n"] {
            try Data(text.utf8).write(to: URL(fileURLWithPath: CleanStopRecord.path(for: path)))
            #expect(!CleanStopRecord.matches(databaseAt: path), "\(text)")
        }
        // A record of a file that is gone.
        #expect(CleanStopRecord.write(forDatabaseAt: path))
        try FileManager.default.removeItem(atPath: path)
        #expect(!CleanStopRecord.matches(databaseAt: path))
        // No record is written for a file that is not there.
        CleanStopRecord.remove(forDatabaseAt: path)
        #expect(!CleanStopRecord.write(forDatabaseAt: path))
        #expect(!FileManager.default.fileExists(atPath: CleanStopRecord.path(for: path)))
    }
}
