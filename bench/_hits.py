"""A generated ``hits`` table in ClickBench's shape (the columns its 43 queries read), and
the 43 queries as both engines take them.

Not ClickBench's data (that is 14 GB of Yandex.Metrica logs): value domains and skew are
imitated — a popular counter (62), a long tail of users and URLs, mostly empty search
phrases and phone models, a month of event times in time order (``_timestamp`` is
``eventtime``), as event tables are written.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa

START = np.datetime64("2013-07-01T00:00:00", "ns")
MONTH_NS = 31 * 86_400 * 10**9

KYMA_DDL = (
    "CREATE TABLE hits (watchid long, javaenable int, title string, goodevent int,"
    " eventtime timestamp, eventdate timestamp, counterid int, clientip int, regionid int,"
    " userid long, os int, useragent int, url string, referer string, isrefresh int,"
    " refererhash long, urlhash long, resolutionwidth int, traficsourceid int,"
    " searchengineid int, searchphrase string, advengineid int, windowclientwidth int,"
    " windowclientheight int, islink int, isdownload int, dontcounthits int,"
    " mobilephone int, mobilephonemodel string)"
)
USER = 435090932899640449  # a user that exists (Q19)
REFERER_HASH = 3594120000172545465
URL_HASH = 2868770270353813622


def _pool(rng: np.random.Generator, n: int, make) -> pa.Array:
    return pa.array([make(i, rng) for i in range(n)], pa.string())


def _zipf(rng: np.random.Generator, n: int, size: int, a: float = 1.2) -> np.ndarray:
    return (rng.zipf(a, size) - 1) % n


def batches(rows: int, size: int, seed: int = 36) -> Iterator[pa.RecordBatch]:
    """``rows`` rows in batches of ``size``, in time order (deterministic for a seed)."""
    rng = np.random.default_rng(seed)
    words = ["google", "yandex", "news", "weather", "cars", "music", "video", "maps", "games"]
    words += [f"w{i}" for i in range(400)]
    domains = _pool(rng, 2000, lambda i, r: f"{'www.google' if i % 97 == 0 else f'site{i}'}.ru")
    phrases = _pool(rng, 50_000, lambda i, r: " ".join(r.choice(words, 1 + i % 4)))
    titles = _pool(
        rng, 20_000, lambda i, r: ("Google " if i % 53 == 0 else "") + " ".join(r.choice(words, 3))
    )
    models = _pool(rng, 300, lambda i, r: f"model-{i}")
    users = rng.integers(1, 2**62, max(rows // 8, 10), dtype=np.int64)
    users[0] = USER
    paths = max(rows // 20, 10)
    times = np.sort(rng.integers(0, MONTH_NS, rows, dtype=np.int64))
    for start in range(0, rows, size):
        n = min(size, rows - start)
        t = START + times[start : start + n].astype("timedelta64[ns]")
        domain = _zipf(rng, len(domains), n)
        path = rng.integers(0, paths, n)
        host = domains.take(pa.array(domain))
        url = pa.compute.binary_join_element_wise(
            pa.array(["http://"] * n), host, pa.array(path.astype(str)), "/"
        )
        url = pa.compute.if_else(pa.array(rng.random(n) < 0.02), pa.scalar(""), url)
        ref_domain = _zipf(rng, len(domains), n)
        referer = pa.compute.binary_join_element_wise(
            pa.array(["https://"] * n), domains.take(pa.array(ref_domain)), pa.array(["x"] * n), "/"
        )
        referer = pa.compute.if_else(pa.array(rng.random(n) < 0.3), pa.scalar(""), referer)
        searched = rng.random(n) < 0.2
        phrase = phrases.take(pa.array(_zipf(rng, len(phrases), n, 1.1)))
        phrase = pa.compute.if_else(pa.array(searched), phrase, pa.scalar(""))
        phoned = rng.random(n) < 0.1
        model = models.take(pa.array(_zipf(rng, len(models), n)))
        model = pa.compute.if_else(pa.array(phoned), model, pa.scalar(""))
        counter = np.where(rng.random(n) < 0.1, 62, rng.integers(1, 100_000, n)).astype(np.int32)
        url_hash = (domain.astype(np.int64) * 1_000_003 + path) * 7919
        url_hash[rng.random(n) < 0.001] = URL_HASH
        ref_hash = ref_domain.astype(np.int64) * 104_729
        ref_hash[rng.random(n) < 0.01] = REFERER_HASH
        yield pa.record_batch(
            {
                "_timestamp": pa.array(t, pa.timestamp("ns", tz="UTC")),
                "watchid": rng.integers(1, 2**62, n, dtype=np.int64),
                "javaenable": rng.integers(0, 2, n, dtype=np.int32),
                "title": titles.take(pa.array(_zipf(rng, len(titles), n, 1.1))),
                "goodevent": np.ones(n, np.int32),
                "eventtime": pa.array(t, pa.timestamp("ns", tz="UTC")),
                "eventdate": pa.array(
                    t.astype("datetime64[D]").astype("datetime64[ns]"), pa.timestamp("ns", tz="UTC")
                ),
                "counterid": counter,
                "clientip": rng.integers(-(2**31) + 8, 2**31 - 1, n, dtype=np.int32),
                "regionid": _zipf(rng, 5000, n).astype(np.int32),
                "userid": users[_zipf(rng, len(users), n, 1.05)],
                "os": rng.integers(0, 100, n, dtype=np.int32),
                "useragent": rng.integers(0, 100, n, dtype=np.int32),
                "url": url,
                "referer": referer,
                "isrefresh": (rng.random(n) < 0.1).astype(np.int32),
                "refererhash": ref_hash,
                "urlhash": url_hash,
                "resolutionwidth": rng.choice([0, 1024, 1280, 1366, 1920], n).astype(np.int32),
                "traficsourceid": rng.integers(-1, 10, n, dtype=np.int32),
                "searchengineid": np.where(searched, rng.integers(1, 30, n), 0).astype(np.int32),
                "searchphrase": phrase,
                "advengineid": np.where(rng.random(n) < 0.05, rng.integers(1, 30, n), 0).astype(
                    np.int32
                ),
                "windowclientwidth": rng.choice([0, 1003, 1263, 1349, 1903], n).astype(np.int32),
                "windowclientheight": rng.choice([0, 628, 705, 862, 947], n).astype(np.int32),
                "islink": (rng.random(n) < 0.05).astype(np.int32),
                "isdownload": (rng.random(n) < 0.01).astype(np.int32),
                "dontcounthits": (rng.random(n) < 0.05).astype(np.int32),
                "mobilephone": np.where(phoned, rng.integers(1, 50, n), 0).astype(np.int32),
                "mobilephonemodel": model,
            }
        )


_WIDTHS = ", ".join(f"sum(resolutionwidth + {i})" for i in range(1, 90))
_JULY = "counterid = 62 AND eventdate >= '2013-07-01' AND eventdate <= '2013-07-31'"

QUERIES = [
    "SELECT count(*) FROM hits",
    "SELECT count(*) FROM hits WHERE advengineid <> 0",
    "SELECT sum(advengineid), count(*), avg(resolutionwidth) FROM hits",
    "SELECT avg(userid) FROM hits",
    "SELECT count(DISTINCT userid) FROM hits",
    "SELECT count(DISTINCT searchphrase) FROM hits",
    "SELECT min(eventdate), max(eventdate) FROM hits",
    "SELECT advengineid, count(*) FROM hits WHERE advengineid <> 0 GROUP BY advengineid"
    " ORDER BY count(*) DESC",
    "SELECT regionid, count(DISTINCT userid) AS u FROM hits GROUP BY regionid"
    " ORDER BY u DESC LIMIT 10",
    "SELECT regionid, sum(advengineid), count(*) AS c, avg(resolutionwidth),"
    " count(DISTINCT userid) FROM hits GROUP BY regionid ORDER BY c DESC LIMIT 10",
    "SELECT mobilephonemodel, count(DISTINCT userid) AS u FROM hits"
    " WHERE mobilephonemodel <> '' GROUP BY mobilephonemodel ORDER BY u DESC LIMIT 10",
    "SELECT mobilephone, mobilephonemodel, count(DISTINCT userid) AS u FROM hits"
    " WHERE mobilephonemodel <> '' GROUP BY mobilephone, mobilephonemodel"
    " ORDER BY u DESC LIMIT 10",
    "SELECT searchphrase, count(*) AS c FROM hits WHERE searchphrase <> ''"
    " GROUP BY searchphrase ORDER BY c DESC LIMIT 10",
    "SELECT searchphrase, count(DISTINCT userid) AS u FROM hits WHERE searchphrase <> ''"
    " GROUP BY searchphrase ORDER BY u DESC LIMIT 10",
    "SELECT searchengineid, searchphrase, count(*) AS c FROM hits WHERE searchphrase <> ''"
    " GROUP BY searchengineid, searchphrase ORDER BY c DESC LIMIT 10",
    "SELECT userid, count(*) FROM hits GROUP BY userid ORDER BY count(*) DESC LIMIT 10",
    "SELECT userid, searchphrase, count(*) FROM hits GROUP BY userid, searchphrase"
    " ORDER BY count(*) DESC LIMIT 10",
    "SELECT userid, searchphrase, count(*) FROM hits GROUP BY userid, searchphrase LIMIT 10",
    "SELECT userid, extract(minute FROM eventtime) AS m, searchphrase, count(*) FROM hits"
    " GROUP BY userid, m, searchphrase ORDER BY count(*) DESC LIMIT 10",
    f"SELECT userid FROM hits WHERE userid = {USER}",
    "SELECT count(*) FROM hits WHERE url LIKE '%google%'",
    "SELECT searchphrase, min(url), count(*) AS c FROM hits WHERE url LIKE '%google%'"
    " AND searchphrase <> '' GROUP BY searchphrase ORDER BY c DESC LIMIT 10",
    "SELECT searchphrase, min(url), min(title), count(*) AS c, count(DISTINCT userid)"
    " FROM hits WHERE title LIKE '%Google%' AND url NOT LIKE '%.google.%'"
    " AND searchphrase <> '' GROUP BY searchphrase ORDER BY c DESC LIMIT 10",
    "SELECT * FROM hits WHERE url LIKE '%google%' ORDER BY eventtime LIMIT 10",
    "SELECT searchphrase FROM hits WHERE searchphrase <> '' ORDER BY eventtime LIMIT 10",
    "SELECT searchphrase FROM hits WHERE searchphrase <> '' ORDER BY searchphrase LIMIT 10",
    "SELECT searchphrase FROM hits WHERE searchphrase <> '' ORDER BY eventtime, searchphrase"
    " LIMIT 10",
    "SELECT counterid, avg(length(url)) AS l, count(*) AS c FROM hits WHERE url <> ''"
    " GROUP BY counterid HAVING count(*) > 100000 ORDER BY l DESC LIMIT 25",
    "SELECT regexp_replace(referer, '^https?://(?:www\\.)?([^/]+)/.*$', '\\1') AS k,"
    " avg(length(referer)) AS l, count(*) AS c, min(referer) FROM hits WHERE referer <> ''"
    " GROUP BY k HAVING count(*) > 100000 ORDER BY l DESC LIMIT 25",
    f"SELECT sum(resolutionwidth), {_WIDTHS} FROM hits",
    "SELECT searchengineid, clientip, count(*) AS c, sum(isrefresh), avg(resolutionwidth)"
    " FROM hits WHERE searchphrase <> '' GROUP BY searchengineid, clientip"
    " ORDER BY c DESC LIMIT 10",
    "SELECT watchid, clientip, count(*) AS c, sum(isrefresh), avg(resolutionwidth) FROM hits"
    " WHERE searchphrase <> '' GROUP BY watchid, clientip ORDER BY c DESC LIMIT 10",
    "SELECT watchid, clientip, count(*) AS c, sum(isrefresh), avg(resolutionwidth) FROM hits"
    " GROUP BY watchid, clientip ORDER BY c DESC LIMIT 10",
    "SELECT url, count(*) AS c FROM hits GROUP BY url ORDER BY c DESC LIMIT 10",
    "SELECT 1, url, count(*) AS c FROM hits GROUP BY 1, url ORDER BY c DESC LIMIT 10",
    "SELECT clientip, clientip - 1, clientip - 2, clientip - 3, count(*) AS c FROM hits"
    " GROUP BY clientip, clientip - 1, clientip - 2, clientip - 3 ORDER BY c DESC LIMIT 10",
    f"SELECT url, count(*) AS pageviews FROM hits WHERE {_JULY} AND dontcounthits = 0"
    " AND isrefresh = 0 AND url <> '' GROUP BY url ORDER BY pageviews DESC LIMIT 10",
    f"SELECT title, count(*) AS pageviews FROM hits WHERE {_JULY} AND dontcounthits = 0"
    " AND isrefresh = 0 AND title <> '' GROUP BY title ORDER BY pageviews DESC LIMIT 10",
    f"SELECT url, count(*) AS pageviews FROM hits WHERE {_JULY} AND isrefresh = 0"
    " AND islink <> 0 AND isdownload = 0 GROUP BY url ORDER BY pageviews DESC"
    " LIMIT 10 OFFSET 1000",
    "SELECT traficsourceid, searchengineid, advengineid, CASE WHEN (searchengineid = 0"
    " AND advengineid = 0) THEN referer ELSE '' END AS src, url AS dst, count(*) AS pageviews"
    f" FROM hits WHERE {_JULY} AND isrefresh = 0 GROUP BY traficsourceid, searchengineid,"
    " advengineid, src, dst ORDER BY pageviews DESC LIMIT 10 OFFSET 1000",
    f"SELECT urlhash, eventdate, count(*) AS pageviews FROM hits WHERE {_JULY}"
    f" AND isrefresh = 0 AND traficsourceid IN (-1, 6) AND refererhash = {REFERER_HASH}"
    " GROUP BY urlhash, eventdate ORDER BY pageviews DESC LIMIT 10 OFFSET 100",
    "SELECT windowclientwidth, windowclientheight, count(*) AS pageviews FROM hits"
    f" WHERE {_JULY} AND isrefresh = 0 AND dontcounthits = 0 AND urlhash = {URL_HASH}"
    " GROUP BY windowclientwidth, windowclientheight ORDER BY pageviews DESC"
    " LIMIT 10 OFFSET 10000",
    "SELECT date_trunc('minute', eventtime) AS m, count(*) AS pageviews FROM hits"
    " WHERE counterid = 62 AND eventtime >= '2013-07-14' AND eventtime <= '2013-07-15'"
    " AND isrefresh = 0 AND dontcounthits = 0 GROUP BY date_trunc('minute', eventtime)"
    " ORDER BY date_trunc('minute', eventtime) LIMIT 10 OFFSET 1000",
]
