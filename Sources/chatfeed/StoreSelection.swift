import ArgumentParser
import ChatModel
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

    /// The database path, the store options, whether to check the file at start, and whether a
    /// file as a daemon's clean stop left it is spared that check.
    func resolve() throws -> (path: String, options: StoreOptions, quickCheck: Bool, trustCleanStop: Bool) {
        let configuration = try loadConfiguration()
        return (
            database ?? configuration.database, configuration.storeOptions,
            configuration.quickCheckAtStart, configuration.skipQuickCheckAfterCleanStop)
    }

    /// The configuration file's settings over the defaults; a bad file is one clear error.
    func loadConfiguration() throws -> ChatfeedConfiguration {
        do {
            return try ChatfeedConfiguration.load(file: config)
        } catch {
            throw CLIFailure(message: error.description)
        }
    }

    /// Opens the store, creating the file when `create` and it is missing, and refuses a damaged
    /// one (`quickCheckAtStart`, unless the file is as a daemon's clean stop left it; the daemon
    /// checks beside its start and refuses the file's writes).
    func openStore(create: Bool = false, readOnly: Bool = false) throws -> ChatDatabase {
        try reportingFailures {
            var (path, options, quickCheck, trustCleanStop) = try resolve()
            if !create, !path.isEmpty, path != ":memory:", !path.hasPrefix("file:"), !FileManager.default.fileExists(atPath: path) {
                throw CLIFailure(message: "no database at '\(path)'; create it with 'chatfeed init --database \(path)'")
            }
            options.readOnly = readOnly
            let store = try ChatDatabase(path: path, options: options)
            // The record stays: this command's own write, if any, makes it stale.
            if quickCheck && !(trustCleanStop && CleanStopRecord.matches(databaseAt: path)) { try store.checkIntegrity() }
            return store
        }
    }
}

extension StoreSelection {
    /// The user a per-user command acts as when `--user` is not given: the configuration's
    /// default user (docs/PROTOCOL.md, Users and sessions).
    func defaultUser() throws -> String {
        try loadConfiguration().defaultUser
    }

    /// Opens the store as `openStore(readOnly:)` does and checks that `user` names a user of it: an unknown
    /// user is not found, before anything is read or written.
    func openStore(actingAs user: String, readOnly: Bool = false) throws -> ChatDatabase {
        let store = try openStore(readOnly: readOnly)
        try reportingFailures {
            try Identifier.validate(user, field: "user")
            if try store.user(id: user) == nil { throw ChatError.notFound(kind: "user", id: user) }
        }
        return store
    }
}

/// `--user U`, taken by every command that reads or writes one user's state: the user it acts
/// as, the configuration's `defaultUser` ("me") when not given.
struct ActingUserOption: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp("Act as this user (default: the configuration's defaultUser, \"me\").", valueName: "id"))
    var user: String?

    /// `--user`, else the default user of `selection`'s configuration.
    func resolve(_ selection: StoreSelection) throws -> String {
        if let user { return user }
        return try selection.defaultUser()
    }
}

/// `--read-only` for the commands that only read.
struct ReadOnlyOption: ParsableArguments {
    @Flag(name: .customLong("read-only"), help: "Open the database read-only: works on read-only media or in a read-only directory.")
    var readOnly = false
}
