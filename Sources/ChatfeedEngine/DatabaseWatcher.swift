import Foundation
import NamedThreads
import SQLite
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Wakes the engine when another process may have committed: a commit in WAL mode writes the
/// database's `-wal` file, and inotify reports it. The engine then checks `PRAGMA data_version`,
/// which says whether anything really changed.
///
/// The engine's own writes wake nothing, and cost the kernel no event: the files are watched one
/// by one (the database and its `-wal`), and those watches listen to nothing while the engine
/// commits or its checkpointer checkpoints (`OwnCommitFilter.onOwnWrites`); the directory is
/// watched for files created or renamed into it only. (Changing what a directory's watch
/// listens to would walk every entry of the directory, at each commit.) Changes seen between
/// own writes that the filter finds to be the engine's own wake nothing either.
///
/// Where inotify is unavailable (another OS, a file system without it), `start` returns nil and
/// the engine keeps polling at the configured interval. `stop()` ends the thread and closes the
/// inotify descriptor (an engine is opened at every reconnect of an in-process client).
final class DatabaseWatcher: Sendable {
    /// The pipe whose write end wakes the watcher's `poll`: `stopByte` to stop it,
    /// `recheckByte` to look at the wal-index header again. Both ends are closed by `stop()`
    /// after the thread ended, so a write never meets a closed reader (no SIGPIPE); the write end
    /// never blocks.
    private let signalPipe: (read: Int32, write: Int32)
    private static let stopByte: UInt8 = 1
    private static let recheckByte: UInt8 = 2
    private let finished = DispatchSemaphore(value: 0)
    /// How often the thread woke to read events (logged at exit).
    let wakes = Atomic<Int>(0)

    private init(signalPipe: (read: Int32, write: Int32)) {
        self.signalPipe = signalPipe
    }

    /// Starts a thread that pushes `.databaseChanged` into `queue` for writes to the database's
    /// files, at most one pending at a time. Returns nil when the directory cannot be watched.
    static func start(databasePath: String, into queue: InputQueue, ownWrites: OwnCommitFilter) -> DatabaseWatcher? {
        #if canImport(Glibc)
        let url = URL(fileURLWithPath: databasePath).standardizedFileURL
        let directory = url.deletingLastPathComponent().path
        let name = url.lastPathComponent
        let files = [url.path, url.path + "-wal"]
        let descriptor = inotify_init1(Int32(IN_CLOEXEC))
        guard descriptor >= 0 else { return nil }
        let fileMask = UInt32(IN_MODIFY | IN_CLOSE_WRITE)
        // Listens while the engine writes: fires only if the file is deleted (a mask of nothing
        // is refused).
        let quietMask = UInt32(IN_DELETE_SELF)
        // Without a file to watch (no `-wal` yet), the directory's watch takes its writes too.
        let watchesFiles = files.allSatisfy { inotify_add_watch(descriptor, $0, fileMask) >= 0 }
        let directoryMask = UInt32(IN_CREATE | IN_MOVED_TO) | (watchesFiles ? 0 : fileMask)
        guard inotify_add_watch(descriptor, directory, directoryMask) >= 0 else {
            close(descriptor)
            return nil
        }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            close(descriptor)
            return nil
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
        let (signalRead, signalWrite) = (ends[0], ends[1])
        // What the files hold now, the engine looks at in its first round (`PRAGMA
        // data_version`): only a change of the header from here on is another process's commit.
        ownWrites.commitsSeen(upTo: ownWrites.currentHeader())
        let watcher = DatabaseWatcher(signalPipe: (signalRead, signalWrite))
        let finished = watcher.finished
        if watchesFiles {
            ownWrites.onOwnWrites { writes in
                switch writes {
                case .began:
                    for file in files { _ = inotify_add_watch(descriptor, file, quietMask) }
                case .ended(let foreignCommitPossible, let afterCheckpoint):
                    for file in files { _ = inotify_add_watch(descriptor, file, fileMask) }
                    if foreignCommitPossible {
                        _ = queue.push(.databaseChanged)
                    } else if afterCheckpoint {
                        // Frames written unwatched during the checkpoint may show later.
                        var byte = Self.recheckByte
                        _ = write(signalWrite, &byte, 1)
                    }
                }
            }
        }
        Thread.start(named: "chatfeed.watch") {
            defer {
                // No handler may use the descriptor once it is closed (its number may be reused).
                ownWrites.onOwnWrites(nil)
                close(descriptor)
                finished.signal()
            }
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            let headerSize = MemoryLayout<inotify_event>.size
            // Milliseconds until the header is looked at again, after a write of the files that
            // another process's commit may publish later: -1, none due.
            var recheck: Int32 = -1
            // The header of the last wake: one wake a commit, however many looks see it.
            var wokenFor: [UInt8]?
            /// Wakes the engine when the header shows a commit it has not seen and was not woken
            /// for; false once the engine stopped.
            func wakeForForeignCommit() -> Bool {
                guard let header = ownWrites.foreignChange() else { return true }
                if header != nil && header == wokenFor { return true }
                wokenFor = header
                return queue.push(.databaseChanged)
            }
            while true {
                var descriptors = [
                    pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: signalRead, events: Int16(POLLIN), revents: 0),
                ]
                let ready = poll(&descriptors, 2, recheck)
                if ready < 0 && errno == EINTR { continue }
                guard ready >= 0 else { return }
                if ready == 0 {
                    // The whole series, whatever it finds: a push before the engine looked may
                    // have been for an earlier commit than the one whose frames were written.
                    if !wakeForForeignCommit() { return }
                    recheck = recheck < Self.recheckLimitMilliseconds ? recheck * 2 : -1
                    continue
                }
                if descriptors[1].revents != 0 {
                    var signals = [UInt8](repeating: 0, count: 64)
                    let count = signals.withUnsafeMutableBytes { read(signalRead, $0.baseAddress, $0.count) }
                    if count <= 0 || signals.prefix(count).contains(Self.stopByte) { return }
                    recheck = 1
                    if descriptors[0].revents == 0 { continue }
                }
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                watcher.wakes.add(1, ordering: .relaxed)
                guard count > 0 else { return }
                var offset = 0
                var relevant = false
                var replaced = false
                buffer.withUnsafeBytes { bytes in
                    while offset + headerSize <= count {
                        let length = Int(bytes.load(fromByteOffset: offset + headerSize - 4, as: UInt32.self))
                        if length == 0 {
                            relevant = true  // an event of a watched file
                        } else {
                            let nameBytes = bytes[(offset + headerSize)..<min(count, offset + headerSize + length)]
                            let eventName = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                            if eventName == name || eventName == name + "-wal" {
                                relevant = true
                                let mask = bytes.load(fromByteOffset: MemoryLayout<Int32>.size, as: UInt32.self)
                                if mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 { replaced = true }
                            }
                        }
                        offset += headerSize + length
                    }
                }
                // A file created or moved in under the name is another file: watch it (the engine
                // then finds out whether its database is still the same).
                if replaced, watchesFiles {
                    for file in files { _ = inotify_add_watch(descriptor, file, fileMask) }
                }
                if relevant {
                    if !wakeForForeignCommit() { return }
                    // Another process's commit writes its frames, syncs them, and only then
                    // publishes its header: the last event may come before the commit shows.
                    recheck = 1
                }
                // Every write call of another process to the files is an event: pausing lets the
                // kernel merge those that follow into one, so the watcher wakes at most
                // `coalescingPause` apart instead of once per write. A foreign commit after a
                // quiet spell is still seen at once.
                usleep(Self.coalescingPauseMicroseconds)
            }
        }
        return watcher
        #else
        return nil
        #endif
    }

    /// After a write of the files by another process (or an own checkpoint, during which another
    /// process's frames go unwatched), the header is looked at again 1, 2, 4 … 256 ms later (a
    /// commit's header comes after its frames and their `fsync`), then no more: the engine's
    /// poll, once a second, is the net beyond.
    static let recheckLimitMilliseconds: Int32 = 256

    /// The pause after each wake (2 ms: at most 500 wakes a second under a stream of writes).
    static let coalescingPauseMicroseconds: UInt32 = 2_000

    /// Ends the watcher's thread and waits until it has closed its descriptors.
    func stop() {
        #if canImport(Glibc)
        var byte = Self.stopByte
        while write(signalPipe.write, &byte, 1) < 0 && (errno == EINTR || errno == EAGAIN) { usleep(1_000) }
        finished.wait()
        close(signalPipe.write)
        close(signalPipe.read)
        #endif
    }
}
