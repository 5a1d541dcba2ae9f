import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Wakes the engine when another process may have committed: a commit in WAL mode writes the
/// database's `-wal` file, and inotify reports it. The engine then checks `PRAGMA data_version`,
/// which says whether anything really changed. Changes that `isForeign` finds to be the
/// engine's own (`OwnCommitFilter`) wake nothing.
///
/// Where inotify is unavailable (another OS, a file system without it), `start` returns false and
/// the engine keeps polling at the configured interval.
enum DatabaseWatcher {
    /// Starts a thread that pushes `.databaseChanged` into `queue` for writes to the database's
    /// files, at most one pending at a time. Returns false when the directory cannot be watched.
    static func start(
        databasePath: String, into queue: InputQueue, isForeign: @escaping @Sendable () -> Bool = { true }
    ) -> Bool {
        #if canImport(Glibc)
        let url = URL(fileURLWithPath: databasePath).standardizedFileURL
        let directory = url.deletingLastPathComponent().path
        let name = url.lastPathComponent
        let descriptor = inotify_init1(Int32(IN_CLOEXEC))
        guard descriptor >= 0 else { return false }
        let mask = UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO)
        guard inotify_add_watch(descriptor, directory, mask) >= 0 else {
            close(descriptor)
            return false
        }
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            let headerSize = MemoryLayout<inotify_event>.size
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return }
                var offset = 0
                var relevant = false
                buffer.withUnsafeBytes { bytes in
                    while offset + headerSize <= count {
                        let length = Int(bytes.load(fromByteOffset: offset + headerSize - 4, as: UInt32.self))
                        let nameBytes = bytes[(offset + headerSize)..<min(count, offset + headerSize + length)]
                        let eventName = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                        if eventName == name || eventName == name + "-wal" { relevant = true }
                        offset += headerSize + length
                    }
                }
                if relevant, isForeign(), !queue.push(.databaseChanged) { return }
            }
        }
        thread.name = "chatfeedd.watcher"
        thread.start()
        return true
        #else
        return false
        #endif
    }
}
