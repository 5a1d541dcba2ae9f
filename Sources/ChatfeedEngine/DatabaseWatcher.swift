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
/// Where inotify is unavailable (another OS, a file system without it), `start` returns nil and
/// the engine keeps polling at the configured interval. `stop()` ends the thread and closes the
/// inotify descriptor (an engine is opened at every reconnect of an in-process client).
final class DatabaseWatcher: Sendable {
    /// The pipe whose write end wakes the watcher's `poll` to stop it. Both ends are closed by
    /// `stop()` after the thread ended, so the write never meets a closed reader (no SIGPIPE).
    private let stopPipe: (read: Int32, write: Int32)
    private let finished = DispatchSemaphore(value: 0)

    private init(stopPipe: (read: Int32, write: Int32)) {
        self.stopPipe = stopPipe
    }

    /// Starts a thread that pushes `.databaseChanged` into `queue` for writes to the database's
    /// files, at most one pending at a time. Returns nil when the directory cannot be watched.
    static func start(
        databasePath: String, into queue: InputQueue, isForeign: @escaping @Sendable () -> Bool = { true }
    ) -> DatabaseWatcher? {
        #if canImport(Glibc)
        let url = URL(fileURLWithPath: databasePath).standardizedFileURL
        let directory = url.deletingLastPathComponent().path
        let name = url.lastPathComponent
        let descriptor = inotify_init1(Int32(IN_CLOEXEC))
        guard descriptor >= 0 else { return nil }
        let mask = UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO)
        guard inotify_add_watch(descriptor, directory, mask) >= 0 else {
            close(descriptor)
            return nil
        }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            close(descriptor)
            return nil
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let stopRead = ends[0]
        let watcher = DatabaseWatcher(stopPipe: (ends[0], ends[1]))
        let finished = watcher.finished
        let thread = Thread {
            defer {
                close(descriptor)
                finished.signal()
            }
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            let headerSize = MemoryLayout<inotify_event>.size
            while true {
                var descriptors = [
                    pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: stopRead, events: Int16(POLLIN), revents: 0),
                ]
                let ready = poll(&descriptors, 2, -1)
                if ready < 0 && errno == EINTR { continue }
                guard ready > 0, descriptors[1].revents == 0 else { return }
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
                // Every write call to the directory's files is an event (the engine's own WAL
                // writes too): pausing lets the kernel merge those that follow into one, so the
                // watcher wakes at most `coalescingPause` apart instead of once per write. A
                // foreign commit after a quiet spell is still seen at once.
                usleep(Self.coalescingPauseMicroseconds)
            }
        }
        thread.name = "chatfeed.watcher"
        thread.start()
        return watcher
        #else
        return nil
        #endif
    }

    /// The pause after each wake (2 ms: at most 500 wakes a second under a stream of writes).
    static let coalescingPauseMicroseconds: UInt32 = 2_000

    /// Ends the watcher's thread and waits until it has closed its descriptors.
    func stop() {
        #if canImport(Glibc)
        var byte: UInt8 = 1
        _ = write(stopPipe.write, &byte, 1)
        finished.wait()
        close(stopPipe.write)
        close(stopPipe.read)
        #endif
    }
}
