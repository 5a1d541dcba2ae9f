import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Thread {
    /// The most bytes of a thread's name the operating system keeps: Linux stores 16 with the
    /// terminating zero, and `pthread_setname_np` refuses a longer name (`ERANGE`).
    public static let maximumNameBytes = 15

    /// Starts `body` on a new thread that the operating system knows by `name`, so that
    /// `top -H`, `perf`, `gdb` and `/proc/<pid>/task/*/comm` tell the project's threads apart.
    ///
    /// Foundation's `Thread.name` alone does not reach the operating system on Linux
    /// (swift-corelibs-foundation never calls `pthread_setname_np`; every thread shows the tail of
    /// the dispatch queue label it was started from), so the new thread names itself before
    /// `body` runs, cut to ``maximumNameBytes`` bytes at a character boundary. (On Linux,
    /// `Thread.name` read from another thread gives the reading thread's name: read the OS name,
    /// `/proc/<pid>/task/<tid>/comm`, instead.) On Apple platforms Foundation names the thread
    /// from `Thread.name`.
    ///
    /// - Parameters:
    ///   - name: what the thread is for, such as `chatfeed.engine`.
    ///   - stackSize: the new thread's stack in bytes; nil keeps the platform's default.
    /// - Returns: the started thread.
    @discardableResult
    public static func start(
        named name: String, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void
    ) -> Thread {
        let osName = osThreadName(name)
        let thread = Thread {
            setOSName(osName)
            body()
        }
        thread.name = name
        if let stackSize { thread.stackSize = stackSize }
        thread.start()
        return thread
    }

    /// Names the calling thread for the operating system. On Linux this is what
    /// `pthread_setname_np` does for a thread (the Glibc module does not export it, and `prctl` is
    /// variadic): a write to the thread's `comm` file. A failure leaves the inherited name.
    private static func setOSName(_ name: String) {
        #if os(Linux)
        let file = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard file >= 0 else { return }
        var bytes = Array(name.utf8)
        _ = write(file, &bytes, bytes.count)
        close(file)
        #endif
    }

    /// `name`, cut to at most ``maximumNameBytes`` UTF-8 bytes without splitting a character.
    public static func osThreadName(_ name: String) -> String {
        var kept = Substring()
        for character in name {
            let longer = kept + String(character)
            if longer.utf8.count > maximumNameBytes { break }
            kept = Substring(longer)
        }
        return String(kept)
    }
}
