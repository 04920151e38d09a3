namespace KvEngine.Tool;

/// <summary>kvtool's usage text (kvtool help).</summary>
internal static class HelpText
{
    public const string Text = """
kvtool: administration of KvEngine and RocksDB databases (RocksDB's ldb and sst_dump).

Database commands (--db=PATH or --db PATH; keys and values hex with --hex, --key_hex, --value_hex):
  scan [--from=KEY] [--to=KEY] [--max_keys=N] [--no_value] [--column_family=NAME]
  get KEY [--column_family=NAME]
  put KEY VALUE [--create_if_missing] [--column_family=NAME]
  delete KEY [--column_family=NAME]
  deleterange BEGIN END [--column_family=NAME]
  list_column_families
  manifest_dump [--verbose] [--path=MANIFEST-FILE]
  dump_wal --walfile=FILE [--print_value] [--header]
  checkconsistency
  repair
  compact [--from=KEY] [--to=KEY] [--column_family=NAME]
  approxsize [--from=KEY] [--to=KEY] [--column_family=NAME]
  checkpoint --checkpoint_dir=DIR

Backup commands (RocksDB BackupEngine directories, as ldb backup writes them):
  backup verify --backup_dir=DIR [--backup_id=N]   (every file's size and CRC32C against meta/ID)

Table commands (sst_dump; --file is a table or a directory of tables):
  sst scan --file=PATH [--from=KEY] [--to=KEY] [--read_num=N] [--output_hex]
  sst verify --file=PATH
  sst properties --file=PATH
  sst dump --file=PATH [--output_hex]        (footer, meta blocks, properties, every entry)
  sst --file=PATH --command=scan|verify|check|raw|none [--show_properties]

Every command: --json (JSON Lines on stdout; keys and values 0x-hex), --progress / --no_progress
(progress on stderr; on by default when stderr is a terminal), --ignore_options (KvEngine's
defaults instead of the database's OPTIONS file).

Exit codes: 0 ok, 1 failed (not found, I/O error, refused), 2 bad command line, 3 corruption,
4 database locked by another process.
""";
}
