import Foundation

/// A small tmpfs mounted inside a temporary directory for one test, unmounted when released:
/// a disk that fills up, or read-only media. Mounting needs root (CI runs as root): tests that
/// use it are enabled only then (`SmallFileSystem.canMount`), and throw if the mount fails.
public final class SmallFileSystem: @unchecked Sendable {
    public let directory: TemporaryDirectory
    /// The mount point, `fs` inside `directory`.
    public let mountPoint: String

    /// Whether this process may mount file systems (it runs as root).
    public static var canMount: Bool { geteuid() == 0 }

    public init(sizeMiB: Int) throws {
        directory = try TemporaryDirectory()
        mountPoint = directory.path("fs")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
        try Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(sizeMiB)m,mode=0777", "tmpfs", mountPoint])
    }

    deinit {
        _ = try? BuiltExecutable.run(executable: "/bin/umount", ["-l", mountPoint])
    }

    /// The path of `name` on the file system.
    public func path(_ name: String) -> String { mountPoint + "/" + name }

    /// The size of the file `name`, 0 when there is none.
    public func size(_ name: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path(name))[.size] as? Int) ?? 0
    }

    /// Makes the file system read-only (`mount -o remount,ro`).
    public func makeReadOnly() throws {
        try Self.run("/bin/mount", ["-o", "remount,ro", mountPoint])
    }

    /// Gives the file system a new size (`mount -o remount,size=…`): room that appears
    /// without deleting anything.
    public func resize(sizeMiB: Int) throws {
        try Self.run("/bin/mount", ["-o", "remount,size=\(sizeMiB)m", mountPoint])
    }

    /// Fills what space is left with the file `name`.
    public func fill(_ name: String = "filler") {
        guard let handle = FileHandle(forWritingAtPath: path(name)) ?? {
            FileManager.default.createFile(atPath: path(name), contents: nil)
            return FileHandle(forWritingAtPath: path(name))
        }() else { return }
        let chunk = Data(count: 64 << 10)
        while (try? handle.write(contentsOf: chunk)) != nil {}
        try? handle.close()
    }

    private static func run(_ executable: String, _ arguments: [String]) throws {
        let outcome = try BuiltExecutable.run(executable: executable, arguments)
        guard outcome.status == .exited(0) else {
            throw HarnessError("\(executable) \(arguments.joined(separator: " ")) failed (\(outcome.status)): \(outcome.stderr)")
        }
    }
}
