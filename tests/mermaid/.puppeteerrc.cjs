// Puppeteer downloads a browser of its own at install unless told not to; the tests use Debian's chromium
// (puppeteer-config.json), and a browser download fails where only the package registries are reachable.
module.exports = { skipDownload: true };
