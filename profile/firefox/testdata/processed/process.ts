// Processes a Gecko profile with the Firefox Profiler's own code, for a
// profiler version older than its profiler-edit tool (src/node-tools),
// doing what that tool does by default: read the file
// (unserializeProfileOfArbitraryFormat: gunzip, process, upgrade), drop
// the strings no thread uses (computeCompactedProfile, as the web app
// does before it uploads), and write the profile as JSON (the web app's
// serializeProfile, later renamed serializeProfileToJsonString).
//
// usage: node process.js IN OUT (see make.sh)
import * as fs from 'fs'
import * as processProfile from 'firefox-profiler/profile-logic/process-profile'
import {computeCompactedProfile} from 'firefox-profiler/profile-logic/profile-compacting'

async function main() {
  const [input, output] = process.argv.slice(2)
  const pp: any = processProfile
  // An ArrayBuffer, which every version reads (older ones no Uint8Array).
  const b = fs.readFileSync(input)
  const profile = await pp.unserializeProfileOfArbitraryFormat(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength))
  const serialize = pp.serializeProfileToJsonString ?? pp.serializeProfile
  fs.writeFileSync(output, serialize(computeCompactedProfile(profile).profile))
}

main().catch(e => {
  console.error(e)
  process.exit(1)
})
