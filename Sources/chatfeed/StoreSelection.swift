import ArgumentParser
import ChatStore
import ChatfeedConfig
import Foundation

/// `--database` and `--config`, shared by every command: the flag over the configuration file
/// (`--config`, else `$CHATFEED_CONFIG`, else `Config/chatfeed.json` when present) over the defaults.
struct StoreSelection: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The database file.", valueName: "path"))
    var database: String?

    @Option(name: .long, help: ArgumentHelp("A configuration file (JSON).", valueName: "file"))
    var config: String?

    /// The database path, the store options, and whether to check the file at start.
    func resolve() throws -> (path: String, options: StoreOptions, quickCheck: Bool) {
        let configuration: ChatfeedConfiguration
        do {
            configuration = try ChatfeedConfiguration.load(file: config)
        } catch {
            throw CLIFailure(message: error.description)
        }
        return (database ?? configuration.database, configuration.storeOptions, configuration.quickCheckAtStart)
    }

    /// Opens the store, creating the file when `create` and it is missing, and refuses a damaged
    /// one as the daemon does (`quickCheckAtStart`).
    func openStore(create: Bool = false, readOnly: Bool = false) throws -> ChatDatabase {
        try reportingFailures {
            var (path, options, quickCheck) = try resolve()
            if !create, !path.isEmpty, path != ":memory:", !path.hasPrefix("file:"), !FileManager.default.fileExists(atPath: path) {
                throw CLIFailure(message: "no database at '\(path)'; create it with 'chatfeed init --database \(path)'")
            }
            options.readOnly = readOnly
            let store = try ChatDatabase(path: path, options: options)
            if quickCheck { try store.checkIntegrity() }
            return store
        }
    }
}

/// `--read-only` for the commands that only read.
struct ReadOnlyOption: ParsableArguments {
    @Flag(name: .customLong("read-only"), help: "Open the database read-only: works on read-only media or in a read-only directory.")
    var readOnly = false
}
