-- wrk script of the evaluation harness (eval/run.sh): a mix of ordinary
-- browser requests and a few attacks, all answered (if let through) by the
-- same static file of the chosen size.
--
--   wrk ... -s eval/mix.lua http://ADDR:PORT -- SIZE ATTACK_EVERY [THINK_MS]
--
-- THINK_MS (default 0): each connection waits that long before each
-- request (wrk's delay()), so C connections offer at most
-- C / (THINK_MS + latency) requests/s: a way to load two configurations
-- at the same rate (eval/run.sh --think-ms).
-- SIZE is the server's file prefix ("1k" or "64k"); every ATTACK_EVERY-th
-- request of a thread is an attack (0: none), cycling through SQL
-- injection, directory traversal, XSS and command injection.  Requests are
-- built once in init(), so request() costs a table lookup.
--
-- done() prints one line for the harness:
--   EVRESULT requests=N duration_us=N p50_us=N p99_us=N sent=N attacks=N
--            s2xx=N s403=N sother=N err_connect=N err_read=N err_write=N
--            err_timeout=N
-- Responses cannot be paired with requests here (several connections per
-- thread), so blocks are counted by their signature: a 403 is the WAF, a
-- connection reset (err_read) is the IDS proxy.

local host = "www.example.test"
local browser = {
	["Host"] = host,
	["User-Agent"] = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
	["Accept"] = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
	["Accept-Language"] = "en-US,en;q=0.5",
	["Accept-Encoding"] = "gzip, deflate",
	["Cookie"] = "session=7f3c2a91d04b4e8a; theme=light",
	["Connection"] = "keep-alive",
}

local clean_paths = {
	"/index.html",
	"/products?id=%d&sort=price&order=asc",
	"/search?q=blue+running+shoes&page=%d",
	"/api/v1/items/%d",
	"/account/orders?year=2025&page=%d",
	"/static/app.js?v=%d",
	"/blog/2025/11/%d/release-notes",
	"/login?next=%%2Faccount%%2Fsettings&ref=%d",
}

-- kind, path, extra headers; WAF-stage and IDS-stage attacks alternate so
-- that even a short run sees both
local attack_list = {
	{ "sqli", "/products?id=1%%27%%20OR%%20%%271%%27%%3D%%271&n=%d", nil },
	{ "traversal", "/download?file=../../../../etc/passwd&n=%d", nil },
	{ "xss", "/search?q=%%3Cscript%%3Ealert(document.cookie)%%3C%%2Fscript%%3E&n=%d", nil },
	{ "rce", "/tools/ping?host=127.0.0.1;cat%%20/etc/hosts&n=%d", nil },
	{ "sqli", "/search?q=1%%20UNION%%20SELECT%%20username,password%%20FROM%%20users--&n=%d", nil },
	{ "rce", "/cgi-bin/status?n=%d", { ["User-Agent"] = "() { :; }; /bin/bash -c 'id'" } },
	{ "xss", "/comment?text=%%3Cimg%%20src%%3Dx%%20onerror%%3Dalert(1)%%3E&n=%d", nil },
	{ "traversal", "/view?page=....//....//....//etc/shadow&n=%d", nil },
}

local size, attack_every = "1k", 25
local clean_reqs, attack_reqs = {}, {}
local threads = {}

-- per-thread counters (globals of each thread's Lua state, read in done)
sent, attacks, s2xx, s403, sother = 0, 0, 0, 0, 0

local function copy(t)
	local r = {}
	for k, v in pairs(t) do r[k] = v end
	return r
end

function setup(thread)
	table.insert(threads, thread)
end

function init(args)
	size = args[1] or size
	attack_every = tonumber(args[2] or attack_every)
	local think = tonumber(args[3] or 0)
	if think > 0 then
		-- defined only with a think time: wrk times every request of a
		-- script that has delay(), even one that returns 0
		delay = function() return think end
	end
	for i = 1, 64 do
		local p = clean_paths[(i - 1) % #clean_paths + 1]
		clean_reqs[i] = wrk.format("GET", "/" .. size .. string.format(p, 1000 + i), copy(browser))
	end
	for i, a in ipairs(attack_list) do
		local h = copy(browser)
		for k, v in pairs(a[3] or {}) do h[k] = v end
		attack_reqs[i] = wrk.format("GET", "/" .. size .. string.format(a[2], i), h)
	end
end

function request()
	sent = sent + 1
	if attack_every > 0 and sent % attack_every == 0 then
		attacks = attacks + 1
		return attack_reqs[(attacks - 1) % #attack_reqs + 1]
	end
	return clean_reqs[sent % #clean_reqs + 1]
end

function response(status, headers, body)
	if status >= 200 and status < 300 then
		s2xx = s2xx + 1
	elseif status == 403 then
		s403 = s403 + 1
	else
		sother = sother + 1
	end
end

function done(summary, latency, requests)
	local t = { sent = 0, attacks = 0, s2xx = 0, s403 = 0, sother = 0 }
	for _, th in ipairs(threads) do
		for k in pairs(t) do t[k] = t[k] + (th:get(k) or 0) end
	end
	local e = summary.errors
	io.write(string.format("EVRESULT requests=%d duration_us=%d p50_us=%d p99_us=%d " ..
		"sent=%d attacks=%d s2xx=%d s403=%d sother=%d err_connect=%d err_read=%d " ..
		"err_write=%d err_timeout=%d\n",
		summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
		t.sent, t.attacks, t.s2xx, t.s403, t.sother, e.connect, e.read, e.write, e.timeout))
end
