"""The pg_catalog relations kyma keeps empty (no indexes, constraints, policies, triggers,
inheritance, publications, extensions, enums or functions of its own), with Postgres 15's
columns: a statement over them plans as over Postgres' and finds no rows.
"""

from __future__ import annotations

import pyarrow as pa

# relation → its columns as ``name:type``, as Postgres 15's pg_attribute lists them
_COLUMNS = {
    "pg_constraint": (
        "oid:oid,conname:name,connamespace:oid,contype:char,condeferrable:boolean,"
        "condeferred:boolean,convalidated:boolean,conrelid:oid,contypid:oid,conindid:oid,"
        "conparentid:oid,confrelid:oid,confupdtype:char,confdeltype:char,confmatchtype:char,"
        "conislocal:boolean,coninhcount:integer,connoinherit:boolean,conkey:smallint[],"
        "confkey:smallint[],conpfeqop:oid[],conppeqop:oid[],conffeqop:oid[],"
        "confdelsetcols:smallint[],conexclop:oid[],conbin:pg_node_tree"
    ),
    "pg_depend": (
        "classid:oid,objid:oid,objsubid:integer,refclassid:oid,refobjid:oid,"
        "refobjsubid:integer,deptype:char"
    ),
    "pg_enum": "oid:oid,enumtypid:oid,enumsortorder:real,enumlabel:name",
    "pg_event_trigger": (
        "oid:oid,evtname:name,evtevent:name,evtowner:oid,evtfoid:oid,evtenabled:char,evttags:text[]"
    ),
    "pg_extension": (
        "oid:oid,extname:name,extowner:oid,extnamespace:oid,extrelocatable:boolean,"
        "extversion:text,extconfig:oid[],extcondition:text[]"
    ),
    "pg_foreign_table": "ftrelid:oid,ftserver:oid,ftoptions:text[]",
    "pg_index": (
        "indexrelid:oid,indrelid:oid,indnatts:smallint,indnkeyatts:smallint,"
        "indisunique:boolean,indnullsnotdistinct:boolean,indisprimary:boolean,"
        "indisexclusion:boolean,indimmediate:boolean,indisclustered:boolean,"
        "indisvalid:boolean,indcheckxmin:boolean,indisready:boolean,indislive:boolean,"
        "indisreplident:boolean,indkey:int2vector,indcollation:oidvector,indclass:oidvector,"
        "indoption:int2vector,indexprs:pg_node_tree,indpred:pg_node_tree"
    ),
    "pg_auth_members": "oid:oid,roleid:oid,member:oid,grantor:oid,admin_option:boolean",
    "pg_opclass": (
        "oid:oid,opcmethod:oid,opcname:name,opcnamespace:oid,opcowner:oid,opcfamily:oid,"
        "opcintype:oid,opcdefault:boolean,opckeytype:oid"
    ),
    "pg_inherits": "inhrelid:oid,inhparent:oid,inhseqno:integer,inhdetachpending:boolean",
    "pg_partitioned_table": (
        "partrelid:oid,partstrat:char,partnatts:smallint,partdefid:oid,partattrs:int2vector,"
        "partclass:oidvector,partcollation:oidvector,partexprs:pg_node_tree"
    ),
    "pg_policy": (
        "oid:oid,polname:name,polrelid:oid,polcmd:char,polpermissive:boolean,polroles:oid[],"
        "polqual:pg_node_tree,polwithcheck:pg_node_tree"
    ),
    "pg_proc": (
        "oid:oid,proname:name,pronamespace:oid,proowner:oid,prolang:oid,procost:real,"
        "prorows:real,provariadic:oid,prosupport:regproc,prokind:char,prosecdef:boolean,"
        "proleakproof:boolean,proisstrict:boolean,proretset:boolean,provolatile:char,"
        "proparallel:char,pronargs:smallint,pronargdefaults:smallint,prorettype:oid,"
        "proargtypes:oidvector,proallargtypes:oid[],proargmodes:char[],proargnames:text[],"
        "proargdefaults:pg_node_tree,protrftypes:oid[],prosrc:text,probin:text,"
        "prosqlbody:pg_node_tree,proconfig:text[],proacl:aclitem[]"
    ),
    "pg_publication": (
        "oid:oid,pubname:name,pubowner:oid,puballtables:boolean,pubinsert:boolean,"
        "pubupdate:boolean,pubdelete:boolean,pubtruncate:boolean,pubviaroot:boolean"
    ),
    "pg_publication_namespace": "oid:oid,pnpubid:oid,pnnspid:oid",
    "pg_publication_rel": "oid:oid,prpubid:oid,prrelid:oid,prqual:pg_node_tree,prattrs:int2vector",
    "pg_rewrite": (
        "oid:oid,rulename:name,ev_class:oid,ev_type:char,ev_enabled:char,is_instead:boolean,"
        "ev_qual:pg_node_tree,ev_action:pg_node_tree"
    ),
    "pg_sequence": (
        "seqrelid:oid,seqtypid:oid,seqstart:bigint,seqincrement:bigint,seqmax:bigint,"
        "seqmin:bigint,seqcache:bigint,seqcycle:boolean"
    ),
    "pg_statistic_ext": (
        "oid:oid,stxrelid:oid,stxname:name,stxnamespace:oid,stxowner:oid,"
        "stxstattarget:integer,stxkeys:int2vector,stxkind:char[],stxexprs:pg_node_tree"
    ),
    "pg_trigger": (
        "oid:oid,tgrelid:oid,tgparentid:oid,tgname:name,tgfoid:oid,tgtype:smallint,"
        "tgenabled:char,tgisinternal:boolean,tgconstrrelid:oid,tgconstrindid:oid,"
        "tgconstraint:oid,tgdeferrable:boolean,tginitdeferred:boolean,tgnargs:smallint,"
        "tgattr:int2vector,tgargs:bytea,tgqual:pg_node_tree,tgoldtable:name,tgnewtable:name"
    ),
}
_TYPES = {
    "oid": pa.int64(),
    "name": pa.string(),
    "text": pa.string(),
    "char": pa.string(),
    "regproc": pa.string(),
    "pg_node_tree": pa.string(),
    "boolean": pa.bool_(),
    "smallint": pa.int16(),
    "integer": pa.int32(),
    "bigint": pa.int64(),
    "real": pa.float32(),
    "bytea": pa.binary(),
    "int2vector": pa.list_(pa.int16()),
    "oidvector": pa.list_(pa.int64()),
    "aclitem": pa.string(),
}
EMPTY = frozenset(_COLUMNS)
_SQL_TYPES = {"oid": "bigint", "name": "text", "char": "text", "regproc": "text"}
_SQL_TYPES |= {"pg_node_tree": "text", "aclitem": "text"}
_SQL_TYPES |= {"int2vector": "smallint[]", "oidvector": "bigint[]"}


def column_types(name: str) -> dict[str, str]:
    """The SQL type of each column of the empty relation ``name``, as kyma builds it.

    >>> column_types("pg_inherits")
    {'inhrelid': 'bigint', 'inhparent': 'bigint', 'inhseqno': 'integer', \
'inhdetachpending': 'boolean'}
    """
    types = {}
    for column in _COLUMNS[name].split(","):
        field, kind = column.split(":")
        element = kind.removesuffix("[]")
        types[field] = _SQL_TYPES.get(element, element) + kind[len(element) :]
    return types


def empty_relation(name: str) -> pa.Table:
    """The empty relation ``name`` with its columns.

    >>> empty_relation("pg_inherits").schema.names
    ['inhrelid', 'inhparent', 'inhseqno', 'inhdetachpending']
    """
    fields = []
    for column in _COLUMNS[name].split(","):
        field, kind = column.split(":")
        element = kind.removesuffix("[]")
        dtype = _TYPES[element]
        fields.append(pa.field(field, pa.list_(dtype) if element != kind else dtype))
    return pa.schema(fields).empty_table()
