import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What a clean stop leaves beside a database it knew sound (its quick check passed, or it
/// started from such a record): the file's identity, size and times once its write-ahead log was
/// emptied into it, in `PATH-cleanstop`. A start that finds the file exactly so — the same device
/// and inode, size, modification and status-change times, and no `-wal` content — knows that no
/// write reached it since it was last known sound, and may skip the quick check, as a file system
/// checks itself after an unclean unmount only (docs/DECISIONS.md, "The quick check after a clean
/// stop"). After a crash (no record: a start takes it away), another process's write, a copy, a
/// restore or a `touch` (other times, another inode), the record does not match and the check
/// runs. What it cannot see is damage at rest that leaves the file's metadata alone, such as a
/// disk's bit rot: turn `skipQuickCheckAfterCleanStop` off to check at every start.
public struct CleanStopRecord: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modified: Timestamp
    var statusChanged: Timestamp

    /// A time of the file's `stat`, to the nanosecond.
    struct Timestamp: Equatable, Sendable {
        var seconds: Int64
        var nanoseconds: Int64
    }

    /// The record's file beside the database at `databasePath`.
    public static func path(for databasePath: String) -> String { databasePath + "-cleanstop" }

    /// The database file at `databasePath` as it is now; nil when it cannot be read, and when
    /// its `-wal` file holds anything (commits not yet in the database file).
    public init?(databaseAt databasePath: String) {
        var info = stat()
        guard stat(databasePath, &info) == 0 else { return nil }
        var wal = stat()
        if stat(databasePath + "-wal", &wal) == 0, wal.st_size > 0 { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modified = Timestamp(seconds: Int64(info.st_mtim.tv_sec), nanoseconds: Int64(info.st_mtim.tv_nsec))
        statusChanged = Timestamp(seconds: Int64(info.st_ctim.tv_sec), nanoseconds: Int64(info.st_ctim.tv_nsec))
    }

    /// True when the file at `databasePath` has a record of its last clean stop that still
    /// describes it exactly. A start that may write then takes the record away
    /// (`remove(forDatabaseAt:)`), whatever it said, so that a crash from then on leaves none.
    public static func matches(databaseAt databasePath: String) -> Bool {
        guard let text = try? String(contentsOfFile: path(for: databasePath), encoding: .utf8),
              let recorded = CleanStopRecord(line: text) else { return false }
        return recorded == CleanStopRecord(databaseAt: databasePath)
    }

    /// Records the file at `databasePath` as it is now, to be matched by the next start; false
    /// (and no record) when its `-wal` file holds anything or the record cannot be written. The
    /// record is written to a temporary file and renamed into place, so that it is whole or absent.
    @discardableResult
    public static func write(forDatabaseAt databasePath: String) -> Bool {
        guard let record = CleanStopRecord(databaseAt: databasePath) else { return false }
        let recordPath = path(for: databasePath)
        let temporary = recordPath + ".tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: Data(record.line.utf8)),
              rename(temporary, recordPath) == 0 else {
            unlink(temporary)
            return false
        }
        return true
    }

    /// Takes the record away (a start that does not trust it, a stop that cannot vouch for the file).
    public static func remove(forDatabaseAt databasePath: String) {
        unlink(path(for: databasePath))
    }

    private static let prefix = "chatfeed clean stop 1:"

    /// One line: `chatfeed clean stop 1: device inode size mtime.s mtime.ns ctime.s ctime.ns`.
    var line: String {
        "\(Self.prefix) \(device) \(inode) \(size) \(modified.seconds) \(modified.nanoseconds) \(statusChanged.seconds) \(statusChanged.nanoseconds)\n"
    }

    /// Parses `line`; nil for anything else (another version's record does not match).
    init?(line: String) {
        guard line.hasPrefix(Self.prefix) else { return nil }
        let fields = line.dropFirst(Self.prefix.count).split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        let numbers = fields.dropFirst(2).compactMap { Int64($0) }
        guard fields.count == 7, let device = UInt64(fields[0]), let inode = UInt64(fields[1]), numbers.count == 5 else {
            return nil
        }
        self.device = device
        self.inode = inode
        size = numbers[0]
        modified = Timestamp(seconds: numbers[1], nanoseconds: numbers[2])
        statusChanged = Timestamp(seconds: numbers[3], nanoseconds: numbers[4])
    }
}
