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

    /// The database path and store options.
    func resolve() throws -> (path: String, options: StoreOptions) {
        let configuration: ChatfeedConfiguration
        do {
            configuration = try ChatfeedConfiguration.load(file: config)
        } catch {
            throw CLIFailure(message: error.description)
        }
        return (database ?? configuration.database, configuration.storeOptions)
    }

    /// Opens the store, creating the file when `create` and it is missing.
    func openStore(create: Bool = false) throws -> ChatDatabase {
        try reportingFailures {
            let (path, options) = try resolve()
            if !create, !FileManager.default.fileExists(atPath: path) {
                throw CLIFailure(message: "no database at '\(path)'; create it with 'chatfeed init --database \(path)'")
            }
            return try ChatDatabase(path: path, options: options)
        }
    }
}
